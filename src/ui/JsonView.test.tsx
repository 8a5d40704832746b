import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { JsonView, parseJsonExact } from './JsonView.tsx';

describe('parseJsonExact', () => {
  it('keeps big numbers as written and flags repeated keys', () => {
    const tree = parseJsonExact('{"n": 12345678901234567890, "a": 1, "a": 2}');
    expect(tree).toEqual({
      kind: 'object',
      entries: [
        { key: 'n', value: { kind: 'number', raw: '12345678901234567890' }, duplicate: false },
        { key: 'a', value: { kind: 'number', raw: '1' }, duplicate: false },
        { key: 'a', value: { kind: 'number', raw: '2' }, duplicate: true },
      ],
    });
  });

  it('decodes escapes and rejects what is not JSON', () => {
    expect(parseJsonExact('"a\\u202Eb\\n"')).toEqual({ kind: 'string', value: 'a\u202Eb\n' });
    expect(parseJsonExact('[1, 2')).toBeNull();
    expect(parseJsonExact("{'a': 1}")).toBeNull();
    expect(parseJsonExact('01')).toBeNull();
    expect(parseJsonExact('"raw\u0001control"')).toBeNull();
    expect(parseJsonExact('[] []')).toBeNull();
  });
});

describe('JsonView', () => {
  it('pretty-prints keys and values and makes hidden characters in strings visible', () => {
    render(<JsonView label="Arguments" json={'{"path":"a\\u202Eb.txt","count":3,"ok":true}'} />);
    expect(screen.getByText('Arguments')).toBeTruthy();
    expect(screen.getByText('path')).toBeTruthy();
    expect(screen.getByText('⟨U+202E⟩')).toBeTruthy();
    expect(screen.getByText('3')).toBeTruthy();
    expect(screen.getByText('true')).toBeTruthy();
  });

  it('shows invalid JSON as raw text with a note', () => {
    render(<JsonView label="Result" json={'not json \u200B'} />);
    expect(screen.getByText(/Not valid JSON/)).toBeTruthy();
    expect(screen.getByText('⟨U+200B⟩')).toBeTruthy();
  });

  it('warns about a repeated key and shows both values', () => {
    render(<JsonView label="Arguments" json={'{"path":"safe.txt","path":"/etc/passwd"}'} />);
    expect(screen.getByText(/repeats a key/)).toBeTruthy();
    expect(screen.getByText('safe.txt')).toBeTruthy();
    expect(screen.getByText('/etc/passwd')).toBeTruthy();
  });

  it('switches to the exact text received', async () => {
    const user = userEvent.setup();
    const { container } = render(<JsonView label="Arguments" json={'{"a":  1}'} />);
    await user.click(screen.getByLabelText('Show exact text'));
    expect(container.querySelector('pre')?.textContent).toBe('{"a":  1}');
  });

  it('collapses nested values beyond the open depth', () => {
    const { container } = render(
      <JsonView label="Arguments" json={'{"a":{"b":{"c":{"d":1}}}}'} openDepth={2} />,
    );
    const nested = [...container.querySelectorAll('details details')];
    expect(nested.map((d) => (d as HTMLDetailsElement).open)).toEqual([true, true, false, false]);
  });
});
