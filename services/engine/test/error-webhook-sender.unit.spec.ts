import { HttpErrorWebhookSender } from '../src/adapters/http/error-webhook-notifier.js';

/** A target the outbound guard refuses is not retried, and the attempt's error does not name the address. */
describe('error webhook sender', () => {
  test('a refused target is abandoned with a message that does not reveal where it resolved', async () => {
    const sender = new HttpErrorWebhookSender({ blockPrivate: true, timeoutMs: 2000 });
    const result = await sender.send(
      'http://localhost/hook',
      {
        processId: crypto.randomUUID(),
        executionId: crypto.randomUUID(),
        status: 'failed',
        error: 'boom',
        failedNode: null,
        attempt: 1,
        traceId: null,
      },
      1,
    );
    expect(result).toEqual({
      delivered: false,
      retry: false,
      httpStatus: null,
      error: 'the outbound guard refused the target',
    });
  });
});
