import { parseTemplatePath, resolveString, resolveTemplates } from '../src/domain/graph/templates.js';

describe('templates', () => {
  const input = { Webhook: { name: 'Ada', tags: ['a', 'b'], nested: { n: 3 } }, 'My Label': { ok: true } };

  test.each([
    ['input["Webhook"]["name"]', ['Webhook', 'name']],
    ["input['My Label']['ok']", ['My Label', 'ok']],
    ['input["Webhook"]["tags"][1]', ['Webhook', 'tags', 1]],
    ['input.Webhook.nested.n', ['Webhook', 'nested', 'n']],
  ])('parses %s', (expression, path) => {
    expect(parseTemplatePath(expression)).toEqual(path);
  });

  test('a whole-value template keeps the JSON type', () => {
    expect(resolveString('{{input["Webhook"]["tags"]}}', input)).toEqual(['a', 'b']);
    expect(resolveString('{{ input["Webhook"]["nested"]["n"] }}', input)).toBe(3);
    expect(resolveString('{{input["My Label"]["ok"]}}', input)).toBe(true);
  });

  test('templates inside text become text, objects as JSON, missing as empty', () => {
    expect(resolveString('Hi {{input["Webhook"]["name"]}}, n={{input["Webhook"]["nested"]}}!', input)).toBe(
      'Hi Ada, n={"n":3}!',
    );
    expect(resolveString('x{{input["Nope"]["field"]}}y', input)).toBe('xy');
  });

  test('resolves nested configs and leaves skipped keys raw', () => {
    const config = {
      code: 'return {{input}}',
      url: 'http://h/{{input["Webhook"]["name"]}}',
      list: ['{{input["Webhook"]["nested"]["n"]}}'],
    };
    expect(resolveTemplates(config, input, ['code'])).toEqual({
      code: 'return {{input}}',
      url: 'http://h/Ada',
      list: [3],
    });
  });

  test('a malformed template is an error', () => {
    expect(() => resolveString('{{process.env}}', input)).toThrow(/must start with input/);
    expect(() => resolveString('{{input[oops]}}', input)).toThrow(/cannot read template/);
  });
});
