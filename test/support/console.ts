import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, onTestFinished } from 'vitest';
import { startTestApi, type TestApi, type TestApiOptions } from './app.js';
import { useRedis } from './redis.js';

/** Debian's Chromium, driven by playwright-core (no browser download). */
export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** What the console's tests need in a file, from its beforeAll on. */
export interface ConsoleHarness {
  /** Debian's Chromium. */
  readonly browser: Browser;
  /** The Redis URL for the `redis` backend, undefined for `memory` (as startConsoleApi takes it). */
  redisUrl(mode: 'memory' | 'redis'): string | undefined;
  /**
   * A new tab (1280×900, not navigated yet) that fails the test if the page throws or logs an
   * error other than `allowed`; closed when the test finishes.
   */
  newTab(allowed?: RegExp[]): Promise<Page>;
  /** A new tab (as newTab) on `url`. */
  open(url: string, allowed?: RegExp[]): Promise<Page>;
}

/**
 * For a file of console tests: a Redis and Debian's Chromium, started before the file's tests
 * (call it at the top level) and stopped after them.
 */
export function useConsoleHarness(): ConsoleHarness {
  // Registered first: after hooks run in reverse, so Redis stops after Chromium closed.
  const redis = useRedis();
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  const harness: ConsoleHarness = {
    get browser() {
      if (!browser) throw new Error('useConsoleHarness(): the browser is only available inside tests and hooks.');
      return browser;
    },
    redisUrl: (mode) => (mode === 'redis' ? redis.url : undefined),
    async newTab(allowed = []) {
      const page = await harness.browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems = pageProblems(page, allowed);
      onTestFinished(async () => {
        await page.close();
        expect(problems).toEqual([]);
      });
      return page;
    },
    async open(url, allowed = []) {
      const page = await harness.newTab(allowed);
      await page.goto(url);
      return page;
    },
  };
  return harness;
}

/**
 * An API for the console's tests on the in-memory backend or on Redis (unique key prefix).
 * On Redis this process also executes runs and fires schedules, as a worker would.
 */
export async function startConsoleApi(redisUrl: string | undefined, options: TestApiOptions = {}): Promise<TestApi> {
  const api = await startTestApi({ ...options, ...(redisUrl ? { redisUrl } : {}), env: { LOG_LEVEL: 'warn', ...options.env } });
  if (redisUrl) {
    api.composition.startExecuting();
    api.composition.startScheduling();
  }
  return api;
}

/** What went wrong inside a page: uncaught errors and console errors (a failed fetch is logged as one). */
export function pageProblems(page: Page, expected: RegExp[] = []): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (expected.some((pattern) => pattern.test(message.text()))) return;
    problems.push(`console.error: ${message.text()}`);
  });
  return problems;
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Fails the test if axe-core finds a serious or critical violation on `screen` (the page as it is). */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  expect(await seriousViolations(page), `axe on ${screen}`).toEqual([]);
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, so the console's own
 * Content-Security-Policy stays on) and returns the serious and critical violations, each as
 * `rule (impact): help @ selectors`.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const { axe, document } = globalThis as unknown as { axe: { run(context: unknown): Promise<{ violations: AxeViolation[] }> }; document: unknown };
    return (await axe.run(document)).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} @ ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
