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

  // The engine also reads `['label']`, `.label` and JSON escapes; a rename must not miss those.
  test('finds and renames every subscript form the engine reads', () => {
    const text = "{{input['Old']['x']}} {{input.Old.y}} {{ input[\"\\u004Fld\"].z }} {{input.Older.x}}";
    expect(labelsReferencedIn(text)).toEqual(['Old', 'Old', 'Old', 'Older']);
    expect(renameLabelInValue(text, 'Old', 'New label')).toBe(
      '{{input["New label"][\'x\']}} {{input["New label"].y}} {{ input["New label"].z }} {{input.Older.x}}',
    );
  });

  test('leaves strings that are not templates of input alone', () => {
    expect(labelsReferencedIn('{{ other["A"] }} input["A"] {{input}}')).toEqual([]);
    expect(renameLabelInValue('{{ other["A"] }} input["A"]', 'A', 'B')).toBe('{{ other["A"] }} input["A"]');
  });
});
