import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { testingHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import type { MessageContext } from '@weft/bus';
import { assertStorableCall } from '../../application/storable-call.js';
import type { TestingRuntime } from '../../testing-runtime.js';
import { TESTING_RUNTIME } from './testing-tokens.js';

/**
 * The testing service's public HTTP routes (contracts/src/http/testing-routes.ts), reached through the
 * gateway. Input the database cannot hold is refused before any handler reads it.
 */
@Controller()
export class TestingHttpController {
  constructor(@Inject(TESTING_RUNTIME) private readonly runtime: TestingRuntime) {}

  @MessagePattern(testingHttp.createTestCase.subject)
  createTestCase(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.cases.create(call, context);
  }

  @MessagePattern(testingHttp.listTestCases.subject)
  listTestCases(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.cases.list(call, context);
  }

  @MessagePattern(testingHttp.getTestCase.subject)
  getTestCase(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.cases.get(call, context);
  }

  @MessagePattern(testingHttp.updateTestCase.subject)
  updateTestCase(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.cases.update(call, context);
  }

  @MessagePattern(testingHttp.deleteTestCase.subject)
  deleteTestCase(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.cases.remove(call, context);
  }

  @MessagePattern(testingHttp.runTestCase.subject)
  runTestCase(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.runs.runOne(call, context);
  }

  @MessagePattern(testingHttp.runBatch.subject)
  runBatch(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.runs.runBatch(call, context);
  }

  @MessagePattern(testingHttp.getBatch.subject)
  getBatch(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.runs.getBatch(call, context);
  }

  @MessagePattern(testingHttp.listTestRuns.subject)
  listTestRuns(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.runs.list(call, context);
  }

  @MessagePattern(testingHttp.getTestRun.subject)
  getTestRun(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.runs.get(call, context);
  }

  @MessagePattern(testingHttp.testRunStats.subject)
  testRunStats(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    assertStorableCall(call);
    return this.runtime.runs.stats(call, context);
  }
}
