import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { CopyButton } from './CopyButton.tsx';

describe('CopyButton', () => {
  it('copies the full text and announces it', async () => {
    const user = userEvent.setup();
    render(<CopyButton text="sha256:abc" label="content hash" />);
    await user.click(screen.getByRole('button', { name: 'Copy content hash' }));
    expect(await navigator.clipboard.readText()).toBe('sha256:abc');
    expect(screen.getByRole('status').textContent).toBe('Copied content hash');
    expect(screen.getByRole('button', { name: 'Copy content hash' }).textContent).toBe('Copied');
  });
});
