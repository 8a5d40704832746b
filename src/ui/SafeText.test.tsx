import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { countHidden, SafeText, toVisibleText } from './SafeText.tsx';

describe('SafeText', () => {
  it('shows a right-to-left override as a labelled placeholder instead of obeying it', () => {
    const { container } = render(<SafeText text={'invoice\u202Etxt.exe'} />);
    const marker = screen.getByText('⟨U+202E⟩');
    expect(marker.getAttribute('title')).toMatch(/RIGHT-TO-LEFT OVERRIDE/);
    expect(container.textContent).toBe('invoice⟨U+202E⟩txt.exe');
    expect(container.textContent).not.toContain('\u202E');
  });

  it('makes zero-width characters visible', () => {
    const { container } = render(<SafeText text={'rm\u200B -rf\uFEFF /\u2060'} />);
    expect(screen.getByText('⟨U+200B⟩').getAttribute('title')).toMatch(/ZERO WIDTH SPACE/);
    expect(screen.getByText('⟨U+FEFF⟩')).toBeTruthy();
    expect(screen.getByText('⟨U+2060⟩')).toBeTruthy();
    expect(container.textContent).not.toMatch(/[\u200B\uFEFF\u2060]/);
  });

  it('shows control characters (C0 and C1) but keeps newlines and tabs', () => {
    const { container } = render(<SafeText text={'a\u001B[31mred\u0085\r\nb\tc'} />);
    expect(screen.getByText('⟨U+001B⟩').getAttribute('title')).toMatch(/ESCAPE/);
    expect(screen.getByText('⟨U+0085⟩')).toBeTruthy();
    expect(screen.getByText('⟨U+000D⟩')).toBeTruthy();
    expect(container.textContent).toContain('\nb\tc');
  });

  it('shows isolates, marks and tag characters', () => {
    render(<SafeText text={'x\u2066y\u2069\u200F\u061C\u{E0041}'} />);
    for (const label of ['⟨U+2066⟩', '⟨U+2069⟩', '⟨U+200F⟩', '⟨U+061C⟩', '⟨U+E0041⟩']) {
      expect(screen.getByText(label)).toBeTruthy();
    }
  });

  it('renders markup as text, never as HTML', () => {
    const { container } = render(<SafeText text={'<img src=x onerror=alert(1)>'} />);
    expect(container.querySelector('img')).toBeNull();
    expect(container.textContent).toBe('<img src=x onerror=alert(1)>');
  });

  it('bare: isolates right-to-left text in a bdi and leaves other text as text', () => {
    const rtl = render(<SafeText bare text={'שלום 12'} />);
    expect(rtl.container.querySelector('bdi')?.textContent).toBe('שלום 12');
    const arabic = render(<SafeText bare text={'x \u0627\u202E'} />);
    expect(arabic.container.querySelector('bdi')?.textContent).toBe('x \u0627⟨U+202E⟩');
    const ltr = render(<SafeText bare text={'spawned 48 entities\u202E'} />);
    expect(ltr.container.querySelector('bdi')).toBeNull();
    expect(ltr.container.textContent).toBe('spawned 48 entities⟨U+202E⟩');
    const styled = render(<SafeText bare text="plain" className="font-mono" />);
    expect(styled.container.querySelector('bdi.font-mono')?.textContent).toBe('plain');
    const whole = render(<SafeText text="plain" />);
    expect(whole.container.querySelector('bdi')?.textContent).toBe('plain');
  });

  it('counts and converts hidden characters for plain-text uses', () => {
    expect(countHidden('a\u202Eb\u200Bc\nd')).toBe(2);
    expect(toVisibleText('a\u202Eb')).toBe('a⟨U+202E⟩b');
  });
});
