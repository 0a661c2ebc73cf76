/**
 * Sign-in for a plain browser: the staff PIN, or an admin key (the first
 * time, with a PIN to choose for next time).
 */
import type { SessionInfo, SignIn } from '../../server/gui/contract.ts';
import { ApiProblem, call, plainWords } from '../api.ts';
import { h, replace } from '../dom.ts';

/** Draws the sign-in screen; calls `done` once a session exists. */
export function renderSignIn(root: HTMLElement, info: SessionInfo, done: () => void): void {
  const message = h('p', { class: 'error-box', role: 'alert', hidden: true });
  const fail = (error: unknown): void => {
    // A refused sign-in says why (wrong PIN, unknown key) in the server's own words.
    message.textContent = error instanceof ApiProblem && error.status === 401 ? error.message : plainWords(error);
    message.hidden = false;
  };
  const submit = async (body: SignIn, button: HTMLButtonElement): Promise<void> => {
    button.disabled = true;
    message.hidden = true;
    try {
      await call('POST', '/gui/api/session', body);
      done();
    } catch (error) {
      fail(error);
    } finally {
      button.disabled = false;
    }
  };

  const pinInput = h('input', {
    id: 'pin',
    type: 'password',
    inputmode: 'numeric',
    autocomplete: 'current-password',
    pattern: '[0-9]*',
    maxlength: 12,
    class: 'big-input',
  });
  const pinButton = h('button', { class: 'button primary', type: 'submit' }, 'Sign in');
  const pinForm = h(
    'form',
    {
      class: 'card',
      onsubmit: (event: Event) => {
        event.preventDefault();
        void submit({ method: 'pin', pin: pinInput.value }, pinButton);
      },
    },
    h('h2', {}, 'Staff PIN'),
    h('label', { for: 'pin' }, 'PIN'),
    pinInput,
    pinButton,
  );

  const keyInput = h('input', { id: 'admin-key', type: 'password', autocomplete: 'off', spellcheck: 'false', class: 'big-input' });
  const newPinInput = h('input', {
    id: 'new-pin',
    type: 'password',
    inputmode: 'numeric',
    autocomplete: 'new-password',
    pattern: '[0-9]{4,12}',
    maxlength: 12,
    class: 'big-input',
  });
  const keyButton = h('button', { class: 'button primary', type: 'submit' }, 'Sign in with the key');
  const keyForm = h(
    'form',
    {
      class: 'card',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const body: SignIn = { method: 'key', key: keyInput.value.trim() };
        if (!info.pinSet && newPinInput.value !== '') body.newPin = newPinInput.value;
        void submit(body, keyButton);
      },
    },
    h('h2', {}, info.pinSet ? 'Admin key' : 'First sign-in'),
    h(
      'p',
      { class: 'hint' },
      'The admin key was printed when the appliance first started and saved in its data folder as “first-admin-key”.',
    ),
    h('label', { for: 'admin-key' }, 'Admin key (fr_live_…)'),
    keyInput,
    !info.pinSet && h('label', { for: 'new-pin' }, 'Choose a staff PIN for next time (4 to 12 digits, optional)'),
    !info.pinSet && newPinInput,
    keyButton,
  );

  replace(
    root,
    h(
      'main',
      { class: 'sign-in' },
      h('h1', {}, 'fittingroom'),
      h('p', { class: 'lead' }, 'Sign in to start trying on.'),
      message,
      h('div', { class: 'sign-in-forms' }, info.pinSet && pinForm, keyForm),
      h('p', { class: 'hint' }, `Version ${info.version}`),
    ),
  );
  (info.pinSet ? pinInput : keyInput).focus();
}
