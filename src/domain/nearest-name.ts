/**
 * The known name a mistyped one most likely meant, for a "did you mean …?" hint, or undefined
 * when none is close. Close means: one is a prefix of the other (`agent` → `agent_id`), or the
 * edit distance is at most a third of the longer name, and at least 1 (`inputs` → `input`,
 * `sesion_id` → `session_id`). Case is ignored; the nearest wins, the first of a tie.
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const wanted = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const other = candidate.toLowerCase();
    const distance = editDistance(wanted, other);
    const prefix = wanted.length >= 3 && (other.startsWith(wanted) || wanted.startsWith(other));
    const close = prefix || distance <= Math.max(1, Math.floor(Math.max(wanted.length, other.length) / 3));
    if (close && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** Levenshtein distance: insertions, deletions and substitutions, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}
