import { describe, expect, it } from 'vitest';
import { isDurableCell } from '../src/highlight';

describe('isDurableCell', () => {
  it('is true for a cell that starts with the %%durable magic, options or not', () => {
    expect(isDurableCell('%%durable\nWhat is 2+2?')).toBe(true);
    expect(isDurableCell('  %%durable --models terse\nHi')).toBe(true);
  });
  it('is false for other cells, line magics and look-alikes', () => {
    expect(isDurableCell('print(1)\n%%durable')).toBe(false);
    expect(isDurableCell('%durable show')).toBe(false);
    expect(isDurableCell('%%durablex')).toBe(false);
    expect(isDurableCell('')).toBe(false);
  });
});
