import { labelsReferencedIn, renameLabelInValue } from '../src/domain/process/templates.js';

describe('template references', () => {
  test('finds the node label of each template, not its fields', () => {
    expect(labelsReferencedIn('a {{input["A"]["x"]}} b {{ input["B"]["A"] }} {{other}}')).toEqual(['A', 'B']);
  });

  test('renames the node subscript only, in nested values', () => {
    const config = { text: '{{input["A"]["A"]}} and A', list: ['{{input["A"]["y"]}}', '{{input["AB"]["z"]}}'], n: 3 };
    expect(renameLabelInValue(config, 'A', 'New')).toEqual({
      text: '{{input["New"]["A"]}} and A',
      list: ['{{input["New"]["y"]}}', '{{input["AB"]["z"]}}'],
      n: 3,
    });
  });

  test('labels with quotes survive a rename', () => {
    expect(renameLabelInValue('{{input["say \\"hi\\""]["x"]}}', 'say "hi"', 'a"b')).toBe('{{input["a\\"b"]["x"]}}');
  });
});
