import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { testingInternal, type ExportedTestCase } from '@weft/contracts';
import type { TestingRuntime } from '../../testing-runtime.js';
import { TESTING_RUNTIME } from './testing-tokens.js';

/** Subjects the catalog calls so test cases travel with export, import and fork; never reachable over HTTP. */
@Controller()
export class TestingInternalController {
  constructor(@Inject(TESTING_RUNTIME) private readonly runtime: TestingRuntime) {}

  @MessagePattern(testingInternal.exportTestCases.subject)
  exportTestCases(@Payload() request: { processId: string; organizationId: string }) {
    return this.runtime.transfer.exportCases(request);
  }

  @MessagePattern(testingInternal.importTestCases.subject)
  importTestCases(
    @Payload()
    request: {
      requestId: string;
      processId: string;
      organizationId: string;
      actor: { userId: string; userName: string };
      testCases: ExportedTestCase[];
    },
  ) {
    return this.runtime.transfer.importCases(request);
  }
}
