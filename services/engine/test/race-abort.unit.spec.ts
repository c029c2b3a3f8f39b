import { raceAbort } from '../src/adapters/nodes/race-abort.js';
import { NodeFailure } from '../src/domain/nodes/node-executor.js';

/** The bound on work that cannot be interrupted (ONNX inference, JSONata): a timeout or a cancel ends the node at once. */
describe('raceAbort', () => {
  const never = () => new Promise<never>(() => undefined);

  test('a timeout fails with the node message while the work never settles', async () => {
    await expect(
      raceAbort(new AbortController().signal, 5, 'the ONNX model timed out after 5 ms', never),
    ).rejects.toEqual(new NodeFailure('the ONNX model timed out after 5 ms'));
  });

  test('a cancel rejects with the signal reason at once; an already cancelled run never starts the work', async () => {
    const controller = new AbortController();
    const running = raceAbort(controller.signal, 60_000, 'timed out', never);
    controller.abort(new Error('cancelled'));
    await expect(running).rejects.toThrow('cancelled');
    let started = false;
    await expect(
      raceAbort(controller.signal, 60_000, 'timed out', async () => {
        started = true;
      }),
    ).rejects.toThrow('cancelled');
    expect(started).toBe(false);
  });

  test('the work result and its own failure pass through', async () => {
    const signal = new AbortController().signal;
    await expect(raceAbort(signal, 60_000, 'timed out', async () => 42)).resolves.toBe(42);
    await expect(
      raceAbort(signal, 60_000, 'timed out', () => Promise.reject(new NodeFailure('bad input'))),
    ).rejects.toThrow('bad input');
  });
});
