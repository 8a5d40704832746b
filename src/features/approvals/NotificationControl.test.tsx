import { act, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NotificationControl } from './NotificationControl.tsx';
import { useApprovalNotifier } from './useApprovalNotifier.ts';

function Harness() {
  return <NotificationControl {...useApprovalNotifier([], true)} />;
}

/** A browser Notification API whose permission and answer the test decides. */
function stubNotification(
  permission: NotificationPermission,
  answer: () => Promise<NotificationPermission>,
) {
  class FakeNotification {
    static permission: NotificationPermission = permission;
    static requestPermission = vi.fn(async () => {
      const next = await answer();
      FakeNotification.permission = next;
      return next;
    });
  }
  vi.stubGlobal('Notification', FakeNotification);
  return FakeNotification;
}

const status = () => screen.getByRole('status');

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('NotificationControl', () => {
  it('explains the default state and says when the browser refuses, with how to allow it', async () => {
    const fake = stubNotification('default', async () => 'denied');
    const user = userEvent.setup();
    render(<Harness />);
    expect(status().textContent).toMatch(
      /Notifications are off\. Turning them on asks the browser/,
    );
    const notify = screen.getByRole('button', { name: 'Notify me of new approvals' });
    expect(notify.getAttribute('aria-describedby')).toBe(status().id);

    await user.click(notify);
    expect(fake.requestPermission).toHaveBeenCalledTimes(1);
    expect(status().textContent).toMatch(/^The browser refused permission\./);
    expect(status().textContent).toMatch(/blocked by the browser for this site/);
    expect(status().textContent).toMatch(/site settings .* set Notifications to Allow/);
    expect(screen.queryByRole('button', { name: /Notify me/ })).toBeNull();
    // The button went away; focus is on the words, not lost to the page.
    expect(document.activeElement).toBe(status());
  });

  it('notices when notifications are allowed in the site settings and the tab regains focus', async () => {
    const fake = stubNotification('denied', async () => 'denied');
    render(<Harness />);
    expect(status().textContent).toMatch(/blocked by the browser/);
    fake.permission = 'granted';
    act(() => {
      window.dispatchEvent(new Event('focus'));
    });
    expect(status().textContent).toMatch(/Notifications are off\. The browser allows them/);
    expect(screen.getByRole('button', { name: 'Notify me of new approvals' })).toBeTruthy();
  });

  it('says the question was closed without an answer, and asks again', async () => {
    let next: NotificationPermission = 'default';
    const fake = stubNotification('default', async () => next);
    const user = userEvent.setup();
    render(<Harness />);
    await user.click(screen.getByRole('button', { name: 'Notify me of new approvals' }));
    expect(status().textContent).toMatch(/closed without an answer, so notifications stay off/);

    next = 'granted';
    await user.click(screen.getByRole('button', { name: 'Notify me of new approvals' }));
    expect(fake.requestPermission).toHaveBeenCalledTimes(2);
    expect(status().textContent).toBe(
      'Notifications are on: you are told when an approval arrives while this tab is in the background.',
    );
  });

  it('explains the on state and turning it off keeps focus on the same button', async () => {
    stubNotification('granted', async () => 'granted');
    localStorage.setItem('agent-studio:approval-notifications', 'on');
    const user = userEvent.setup();
    render(<Harness />);
    expect(status().textContent).toMatch(/^Notifications are on/);
    const toggle = screen.getByRole('button', { name: 'Turn off notifications' });
    await user.click(toggle);
    expect(status().textContent).toMatch(/Notifications are off\. The browser allows them/);
    expect(toggle.textContent).toBe('Notify me of new approvals');
    expect(document.activeElement).toBe(toggle);
    expect(localStorage.getItem('agent-studio:approval-notifications')).toBeNull();
  });

  it('shows that it is asking, and says so when the browser does not answer', async () => {
    let reject: (error: Error) => void = () => undefined;
    stubNotification(
      'default',
      () =>
        new Promise<NotificationPermission>((_, fail) => {
          reject = fail;
        }),
    );
    const user = userEvent.setup();
    render(<Harness />);
    await user.click(screen.getByRole('button', { name: 'Notify me of new approvals' }));
    const waiting = screen.getByRole('button', { name: 'Asking the browser…' });
    expect((waiting as HTMLButtonElement).disabled).toBe(true);
    await act(async () => reject(new Error('Permission request was blocked')));
    expect(status().textContent).toMatch(
      /did not answer the permission request \(Permission request was blocked\); notifications stay off/,
    );
    expect(screen.getByRole('button', { name: 'Notify me of new approvals' })).toBeTruthy();
  });

  it('says when the browser has no notifications at all, and offers no button', () => {
    vi.stubGlobal('Notification', undefined);
    render(<Harness />);
    expect(status().textContent).toMatch(/This browser cannot show notifications here/);
    expect(status().textContent).toMatch(/still show in this inbox and in the tab title/);
    expect(screen.queryByRole('button')).toBeNull();
  });
});
