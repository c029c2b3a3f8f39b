import { ProblemError, type RequestSpec } from '@weft/contracts';
import { extractTraceContext, runsInCallersTrace, withSpan, type Logger } from '@weft/observability';
import type { MessageContext, SendOptions, Subscription } from '../../bus.js';
import { InFlight } from '../../in-flight.js';
import { jsonCopy } from '../../json-payload.js';
import { httpReplyCopyWithin, jsonCopyWithin } from '../../message-size.js';
import { messageContext, outgoingHeaders } from '../../message-headers.js';
import { problemFromError } from '../../problem-reply.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../bus-defaults.js';

type Handler = (payload: unknown, context: MessageContext) => Promise<unknown>;

interface QueueGroup {
  handlers: Handler[];
  next: number;
}

/** Request/reply in process, with NATS semantics: queue groups share requests round-robin. */
export class InMemoryRequestReply {
  private readonly groups = new Map<string, Map<string, QueueGroup>>();
  private readonly inFlight = new InFlight();

  constructor(
    private readonly logger: Logger,
    private readonly maxMessageBytes: number,
  ) {}

  serve<Req, Res>(spec: RequestSpec<Req, Res>, handler: (payload: Req, context: MessageContext) => Promise<Res>) {
    const bySubject = this.groups.get(spec.subject) ?? new Map<string, QueueGroup>();
    this.groups.set(spec.subject, bySubject);
    const group = bySubject.get(spec.handledBy) ?? { handlers: [], next: 0 };
    bySubject.set(spec.handledBy, group);
    const registered = handler as Handler;
    group.handlers.push(registered);
    const subscription: Subscription = {
      unsubscribe: async () => {
        group.handlers = group.handlers.filter((candidate) => candidate !== registered);
        if (group.handlers.length === 0) bySubject.delete(spec.handledBy);
        await this.inFlight.settled();
      },
    };
    return subscription;
  }

  async request<Req, Res>(spec: RequestSpec<Req, Res>, payload: Req, options: SendOptions = {}): Promise<Res> {
    return withSpan(
      `request ${spec.subject}`,
      { 'messaging.system': 'in-memory', 'messaging.destination.name': spec.subject },
      async () => {
        const handler = this.pickHandler(spec.subject);
        if (!handler) throw new ProblemError(503, `No service answers ${spec.subject}.`);
        const headers = outgoingHeaders(options);
        const timeout = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
        const reply = this.inFlight.track(
          this.answer(
            spec.subject,
            handler,
            jsonCopyWithin(payload, this.maxMessageBytes, 'request'),
            headers,
            options.replyBodyAsJsonText === true,
          ),
        );
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new ProblemError(504, `${spec.subject} did not answer within ${timeout} ms.`)),
            timeout,
          );
        });
        try {
          const outcome = await Promise.race([reply, timedOut]);
          if ('problem' in outcome) throw ProblemError.fromProblem(outcome.problem);
          return outcome.result as Res;
        } finally {
          clearTimeout(timer);
        }
      },
      { kind: 'client' },
    );
  }

  hasHandlers(): boolean {
    return this.groups.size > 0;
  }

  async settled(): Promise<void> {
    await this.inFlight.settled();
  }

  private pickHandler(subject: string): Handler | undefined {
    // Like NATS with several queue groups, the first answer wins; Weft declares one group per subject.
    const group = this.groups.get(subject)?.values().next().value;
    if (!group || group.handlers.length === 0) return undefined;
    const handler = group.handlers[group.next % group.handlers.length];
    group.next += 1;
    return handler;
  }

  private async answer(
    subject: string,
    handler: Handler,
    payload: unknown,
    headers: Record<string, string>,
    replyBodyAsJsonText: boolean,
  ): Promise<{ result: unknown } | { problem: ReturnType<typeof problemFromError> }> {
    // Let the caller's stack unwind first, as a network hop would.
    await Promise.resolve();
    // The handler runs in the caller's async context: with tracing off that is already the trace
    // the headers carry, so it is not parsed from them again and entered as a copy of itself.
    const parent = runsInCallersTrace() ? undefined : extractTraceContext(headers);
    return withSpan(
      `serve ${subject}`,
      { 'messaging.system': 'in-memory', 'messaging.destination.name': subject },
      async () => {
        try {
          const result = await handler(payload, messageContext({ ...headers }));
          return {
            result: replyBodyAsJsonText
              ? httpReplyCopyWithin(result, this.maxMessageBytes)
              : jsonCopyWithin(result, this.maxMessageBytes, 'reply'),
          };
        } catch (error) {
          return { problem: jsonCopy(problemFromError(error, this.logger, subject)) };
        }
      },
      parent ? { kind: 'server', parent } : { kind: 'server' },
    );
  }
}
