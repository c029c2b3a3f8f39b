import { validateNodeConfig } from '@weft/contracts';

const file = { name: 'scan.png', url: 'weft-blob://org/uploads/scan.png', size: 10 };

describe('configs of the email, webhook, OCR and web automation nodes (shared with lint)', () => {
  test.each([
    [
      'integrationNode',
      { label: 'm', kind: 'email', connectionId: 'c', to: 'a@x.test', subject: 's', attachments: [file] },
    ],
    [
      'integrationNode',
      {
        label: 'm',
        kind: 'email',
        connectionId: 'c',
        to: ['a@x.test'],
        subject: 's',
        attachments: '{{input["In"]["files"]}}',
      },
    ],
    ['integrationNode', { label: 'w', kind: 'webhook', url: 'https://x.test/hook', secret: 'k', body: { a: 1 } }],
    ['integrationNode', { label: 'h', kind: 'http', url: 'https://x.test/' }],
    ['ocrNode', { label: 'o', file }],
    ['ocrNode', { label: 'o', file: '{{input["In"]["file"]}}', languages: ['eng', 'deu'] }],
    [
      'webAutomationNode',
      {
        label: 'b',
        allowedHosts: ['example.test'],
        steps: [
          { action: 'goto', url: 'http://example.test/' },
          { action: 'fill', selector: '#q', value: 'x' },
          { action: 'extractAttribute', selector: 'a', attribute: 'href', name: 'link' },
          { action: 'screenshot', name: 'page.png' },
          { action: 'pdf' },
        ],
      },
    ],
  ])('%s accepts %j', (type, config) => {
    expect(validateNodeConfig(type, config)).toEqual([]);
  });

  const messages = (type: string, config: unknown): string[] =>
    validateNodeConfig(type, config).map((violation) => `${violation.path} ${violation.message}`);

  test('an email without connection, recipients or subject is refused', () => {
    expect(messages('integrationNode', { label: 'm', kind: 'email' })).toEqual(
      expect.arrayContaining([
        "/config must have required property 'connectionId'",
        "/config must have required property 'to'",
        "/config must have required property 'subject'",
      ]),
    );
  });

  test('a webhook needs its url and secret; an HTTP call still needs its url', () => {
    expect(messages('integrationNode', { label: 'w', kind: 'webhook', url: 'https://x.test' })).toContain(
      "/config must have required property 'secret'",
    );
    expect(messages('integrationNode', { label: 'h' })).toContain("/config must have required property 'url'");
    expect(messages('integrationNode', { label: 'h', kind: 'sms' })).toContain(
      '/config/kind must be equal to one of the allowed values',
    );
  });

  test('OCR needs a file reference and language codes', () => {
    expect(messages('ocrNode', { label: 'o' })).toContain("/config must have required property 'file'");
    expect(messages('ocrNode', { label: 'o', file: { name: 'x' } })).toContain(
      "/config/file must have required property 'url'",
    );
    expect(messages('ocrNode', { label: 'o', file, languages: ['../etc'] })).toContain(
      '/config/languages/0 must match pattern "^[a-z][a-z_]{1,15}$"',
    );
  });

  test('web automation steps need the fields of their action', () => {
    expect(
      messages('webAutomationNode', {
        label: 'b',
        steps: [{ action: 'goto' }, { action: 'extractAttribute', selector: 'a' }, { action: 'hover' }],
      }),
    ).toEqual(
      expect.arrayContaining([
        "/config/steps/0 must have required property 'url'",
        "/config/steps/1 must have required property 'name'",
        "/config/steps/1 must have required property 'attribute'",
        '/config/steps/2/action must be equal to one of the allowed values',
      ]),
    );
    expect(messages('webAutomationNode', { label: 'b', steps: [] })).toContain(
      '/config/steps must NOT have fewer than 1 items',
    );
    expect(
      messages('webAutomationNode', { label: 'b', steps: [{ action: 'pdf' }], allowedHosts: ['http://x/'] }),
    ).toContain('/config/allowedHosts/0 must match pattern "^[^/:\\s]+$"');
  });
});
