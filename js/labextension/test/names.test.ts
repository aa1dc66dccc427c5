import { describe, expect, it } from 'vitest';
import table from './session_names.json';
import { nameBasedId } from '../src/names';

describe('nameBasedId', () => {
  it.each(table.names)('$why', ({ name, id }) => {
    expect(nameBasedId(`work/${name}.ipynb`)).toBe(id);
    expect(nameBasedId(name)).toBe(id);
  });
});
