import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalDiskBlobStorage } from '@weft/blob-storage';
import { executionEventSchemas } from '@weft/contracts';
import { upcastEvent, type StoredEvent } from '@weft/event-store';
import { blobValueStore } from '../src/adapters/blob-value-store.js';
import {
  EventTooLargeError,
  prepareForStorage,
  resolveStoredValues,
  type EventStorage,
} from '../src/application/event-values.js';
import type { ExecutionEvent } from '../src/domain/execution/events.js';
import { executionUpcasters, type NodeStartedDataV1 } from '../src/domain/execution/upcasters.js';

describe('NodeStarted version 1 upcaster', () => {
  const v1: NodeStartedDataV1 = {
    executionId: 'ex',
    nodeId: 'b',
    nodeName: 'B',
    nodeType: 'scriptNode',
    inputData: { A: { n: 1 } },
    attempt: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
  };
  const stored = (type: string, data: unknown): StoredEvent => ({
    eventId: 'e',
    streamId: 'execution-ex',
    streamVersion: 2,
    position: 2,
    type,
    schemaVersion: 1,
    data,
    metadata: {},
    recordedAt: new Date(0),
  });

  test('keeps the copied input and has no references', () => {
    const upcast = upcastEvent(stored('NodeStarted', v1), executionUpcasters);
    expect(upcast.schemaVersion).toBe(2);
    expect(upcast.data).toEqual({ ...v1, inputFrom: [] });
  });

  test('the other older events are valid at the current version as they are', () => {
    const data = { executionId: 'ex', nodeId: 'b', outputData: 1, handles: ['output'] };
    const upcast = upcastEvent(stored('NodeCompleted', data), executionUpcasters);
    expect(upcast).toMatchObject({ schemaVersion: executionEventSchemas.NodeCompleted.schemaVersion, data });
    const failed = { executionId: 'ex', nodeId: 'b', error: 'boom', completedAt: '2026-01-01T00:00:00.000Z' };
    expect(upcastEvent(stored('NodeFailed', failed), executionUpcasters)).toMatchObject({
      schemaVersion: executionEventSchemas.NodeFailed.schemaVersion,
      data: failed,
    });
  });
});

describe('event values in blob storage', () => {
  let dir: string;
  let storage: LocalDiskBlobStorage;
  let events: EventStorage;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-values-'));
    storage = new LocalDiskBlobStorage(dir);
    events = { limits: { maxEventBytes: 4096, valueInlineMaxBytes: 1024 }, values: blobValueStore(storage) };
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  const completed = (outputData: unknown, error?: string): ExecutionEvent => ({
    type: 'NodeCompleted',
    data: {
      executionId: 'ex',
      nodeId: error ?? 'n',
      outputData,
      handles: ['output'],
      completedAt: '2026-01-01T00:00:00.000Z',
      durationMs: 1,
    },
  });
  const files = async () => (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.json'));

  test('a small value stays inline', () => {
    const prepared = prepareForStorage(completed({ n: 1 }), events);
    expect(prepared).toMatchObject({ schemaVersion: 3, data: { outputData: { n: 1 } }, blobWrites: [] });
  });

  test('a large value is stored once as a blob and read back', async () => {
    const value = { text: 'x'.repeat(5000) };
    const prepared = prepareForStorage(completed(value), events);
    await Promise.all(prepared.blobWrites);
    expect(prepared.data.outputData).toBeUndefined();
    expect(prepared.data.outputDataRef).toEqual({
      url: expect.stringMatching(/^weft-blob:\/\/execution-values\/ex\//),
      size: JSON.stringify(value).length,
    });
    expect(await files()).toHaveLength(1);
    const read = await resolveStoredValues(
      { type: 'NodeCompleted', data: prepared.data } as unknown as ExecutionEvent,
      events.values,
    );
    expect((read.data as { outputData: unknown }).outputData).toEqual(value);
  });

  test('an event over the limit is refused before any blob is written', async () => {
    const inlineOnly: EventStorage = { limits: { maxEventBytes: 4096, valueInlineMaxBytes: 1024 * 1024 } };
    expect(() => prepareForStorage(completed({ text: 'x'.repeat(5000) }), inlineOnly)).toThrow(EventTooLargeError);
    const hugeName = completed(1, 'n'.repeat(5000));
    expect(() => prepareForStorage(hugeName, events)).toThrow(/exceeds WEFT_EVENT_MAX_BYTES \(4096 bytes\)/);
    expect(await files()).toHaveLength(0);
  });

  test('a value over WEFT_EVENT_VALUE_MAX_BYTES is refused, not stored anywhere', async () => {
    const capped: EventStorage = { ...events, limits: { ...events.limits, valueMaxBytes: 2048 } };
    expect(() => prepareForStorage(completed({ text: 'x'.repeat(3000) }), capped)).toThrow(
      /^NodeCompleted outputData of 3011 bytes exceeds WEFT_EVENT_VALUE_MAX_BYTES \(2048 bytes\)$/,
    );
    expect(await files()).toHaveLength(0);
    // Under the cap, a value still goes to blob storage as before.
    await Promise.all(prepareForStorage(completed({ text: 'x'.repeat(1500) }), capped).blobWrites);
    expect(await files()).toHaveLength(1);
  });

  test('values that fit one by one but not in one JavaScript string are refused as too large, not thrown as RangeError', () => {
    // 34 outputs of 16 MiB (one string, shared): JSON of over 512 MiB, more than V8 lets a string hold.
    const output = 'o'.repeat(16 * 1024 * 1024);
    const outputs = Object.fromEntries(Array.from({ length: 34 }, (_, index) => [`Out${index}`, output]));
    const event: ExecutionEvent = {
      type: 'ExecutionCompleted',
      data: { executionId: 'ex', outputData: outputs, completedAt: '2026-01-01T00:00:00.000Z' },
    } as ExecutionEvent;
    expect(() => prepareForStorage(event, events)).toThrow(
      /^ExecutionCompleted outputData larger than a JavaScript string holds exceeds WEFT_EVENT_VALUE_MAX_BYTES \(16777216 bytes\)$/,
    );
  });
});
