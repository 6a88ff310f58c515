import type { RunEvent } from '../types.js';
import { Notice } from './ui.js';

export interface FeedEntry {
  id: string;
  event: RunEvent;
}

function detail(event: RunEvent): string {
  switch (event.type) {
    case 'node_end':
      return event.status ?? '';
    case 'interrupted':
      return `approval ${event.approval_id ?? ''}`;
    case 'approval_decided':
      return `${event.approved ? 'approved' : 'rejected'} by ${event.by ?? '?'}`;
    case 'failed':
    case 'cancelled':
      return event.error ?? '';
    case 'custom':
      return `${event.name ?? ''} ${JSON.stringify(event.data)}`;
    default:
      return '';
  }
}

const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3 });

/** The session's events in the order the stream delivered them (event id order), custom ones included. */
export function EventFeed({ entries, error }: { entries: FeedEntry[]; error: string | undefined }) {
  return (
    <section aria-labelledby="events-title" class="card">
      <h2 id="events-title">Events</h2>
      {error ? <Notice kind="error">Live events stopped: {error}</Notice> : null}
      <div role="log" aria-labelledby="events-title" class="feed">
        {entries.length === 0 ? <p class="empty">No event yet.</p> : null}
        <ol>
          {entries.map(({ id, event }) => (
            <li key={id} data-type={event.type} data-id={id}>
              <time dateTime={event.ts}>{TIME.format(new Date(event.ts))}</time> <span class={`event event-${event.type}`}>{event.type}</span>
              {event.node ? <code>{event.node}</code> : null} <span class="event-detail">{detail(event)}</span>
            </li>
          ))}
        </ol>
      </div>
    </section>
  );
}
