import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Controller, Inject, type INestMicroservice } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { notFound, ProblemError, request } from '@weft/contracts';
import { of } from 'rxjs';
import { BUS, BusExceptionFilter, BusModule, BusTransport, type Bus, type MessageContext } from '../src/index.js';

const prefix = `weft.test.nest.${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const specs = {
  greet: request<{ name: string }, { greeting: string; user?: string; correlationId?: string; busInjected: boolean }>(
    `${prefix}.greet`,
    ['testing'],
    'testing',
  ),
  observe: request<{ n: number }, { doubled: number }>(`${prefix}.observe`, ['testing'], 'testing'),
  missing: request<{ id: string }, never>(`${prefix}.missing`, ['testing'], 'testing'),
  crash: request<object, never>(`${prefix}.crash`, ['testing'], 'testing'),
  nothing: request<object, undefined>(`${prefix}.nothing`, ['testing'], 'testing'),
};

@Controller()
class GreetingController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @MessagePattern(specs.greet.subject)
  async greet(@Payload() call: { name: string }, @Ctx() context: MessageContext) {
    return {
      greeting: `hello ${call.name}`,
      user: context.actor?.userName,
      correlationId: context.correlationId,
      busInjected: typeof this.bus.request === 'function',
    };
  }

  @MessagePattern(specs.observe.subject)
  observe(@Payload() call: { n: number }) {
    return of({ doubled: call.n * 2 });
  }

  @MessagePattern(specs.missing.subject)
  missing(@Payload() call: { id: string }) {
    throw notFound(`process ${call.id} not found`);
  }

  @MessagePattern(specs.crash.subject)
  crash(): never {
    throw new Error('internal stack detail');
  }

  @MessagePattern(specs.nothing.subject)
  async nothing(): Promise<void> {}
}

/** Serves GreetingController through BusTransport on buses from `createBus`, and calls it. */
export function describeBusTransport(name: string, createBus: () => Promise<Bus>): void {
  describe(`BusTransport over ${name}`, () => {
    let server: Bus;
    let client: Bus;
    let microservice: INestMicroservice;

    beforeAll(async () => {
      server = await createBus();
      client = await createBus();
      const moduleRef = await Test.createTestingModule({
        imports: [BusModule.forRoot(server)],
        controllers: [GreetingController],
      }).compile();
      microservice = moduleRef.createNestMicroservice({ strategy: new BusTransport(server, { service: 'testing' }) });
      microservice.useGlobalFilters(new BusExceptionFilter());
      await microservice.listen();
    });

    afterAll(async () => {
      await microservice.close();
      await Promise.all([client.close(), server.close()]);
    });

    it('serves a @MessagePattern handler with @Payload, @Ctx and the injected bus', async () => {
      const reply = await client.request(
        specs.greet,
        { name: 'Ada' },
        { correlationId: 'corr-nest', actor: { organizationId: 'o', userId: 'u', userName: 'Ada L', system: false } },
      );
      expect(reply).toEqual({ greeting: 'hello Ada', user: 'Ada L', correlationId: 'corr-nest', busInjected: true });
    });

    it('replies with the value of a returned Observable', async () => {
      await expect(client.request(specs.observe, { n: 21 })).resolves.toEqual({ doubled: 42 });
    });

    it('replies undefined for a handler that returns nothing', async () => {
      await expect(client.request(specs.nothing, {})).resolves.toBeUndefined();
    });

    it('answers a thrown ProblemError with the same problem', async () => {
      const error = await client.request(specs.missing, { id: 'p-1' }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProblemError);
      expect((error as ProblemError).problem).toEqual(notFound('process p-1 not found').problem);
    });

    it('answers any other error with a 500 that hides the detail', async () => {
      const error = await client.request(specs.crash, {}).catch((caught: unknown) => caught);
      expect((error as ProblemError).status).toBe(500);
      expect(JSON.stringify((error as ProblemError).problem)).not.toContain('internal stack detail');
    });
  });
}
