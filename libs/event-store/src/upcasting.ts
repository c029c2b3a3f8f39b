import type { StoredEvent, Upcasters } from './event-store.js';

/** Merges upcaster sets; a second upcaster for the same type and version is a bug. */
export function mergeUpcasters(into: Upcasters, added: Upcasters): void {
  for (const [type, byVersion] of Object.entries(added)) {
    const existing = (into[type] ??= {});
    for (const [version, upcast] of Object.entries(byVersion)) {
      if (existing[Number(version)]) throw new Error(`upcaster for ${type} v${version} registered twice`);
      existing[Number(version)] = upcast;
    }
  }
}

/** Lifts an event's data through every upcaster from its stored schema version upwards. */
export function upcastEvent(event: StoredEvent, upcasters: Upcasters): StoredEvent {
  const byVersion = upcasters[event.type];
  // Checked before `data` is read: an event read as JSON text is parsed only when it is used (the
  // outbox relay publishes the text), and most events are at their current version already.
  if (!byVersion?.[event.schemaVersion]) return event;
  let { data, schemaVersion } = event;
  for (let upcast = byVersion[schemaVersion]; upcast; upcast = byVersion[schemaVersion]) {
    data = upcast(data);
    schemaVersion += 1;
  }
  return schemaVersion === event.schemaVersion ? event : { ...event, data, schemaVersion };
}
