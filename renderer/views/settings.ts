/**
 * Settings: API keys (create, shown once; revoke; rotate), the webhook
 * secret, redeeming a voucher, the engines with device and readiness, data
 * retention, and the staff PIN.
 */
import type { ApiKey, Engine, Redemption, WebhookSecret } from '../../client/index.ts';
import type { GuiChoices, GuiSettings } from '../../server/gui/contract.ts';
import { call, plainWords } from '../api.ts';
import { h, replace, toast, when } from '../dom.ts';
import type { Screen } from '../main.ts';

function section(id: string, title: string, ...children: (Node | false | null | undefined)[]): HTMLElement {
  return h('section', { class: 'panel', id, 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title` }, title), ...children);
}

function secretBox(label: string, value: string, id: string): HTMLElement {
  const field = h('input', { id, class: 'big-input mono', readonly: true, value, 'aria-label': label });
  return h(
    'div',
    { class: 'secret-box' },
    field,
    h(
      'button',
      {
        type: 'button',
        class: 'button small',
        onclick: async () => {
          field.select();
          try {
            await navigator.clipboard.writeText(value);
            toast('Copied.');
          } catch {
            toast('Select the text and copy it by hand.', 'error');
          }
        },
      },
      'Copy',
    ),
  );
}

/** The Settings screen. */
/** One of the shop's yes-or-no choices, saved as it is ticked (and put back if saving fails). */
function choiceBox(
  name: keyof GuiChoices,
  id: string,
  label: string,
  checked: boolean,
  staff: boolean,
  [whenOn, whenOff]: [string, string],
): HTMLElement {
  return h(
    'label',
    { class: 'check' },
    h('input', {
      type: 'checkbox',
      id,
      checked,
      disabled: staff,
      onchange: async (event: Event) => {
        const box = event.currentTarget as HTMLInputElement;
        try {
          await call('PUT', '/gui/api/settings', { [name]: box.checked } satisfies GuiChoices);
          toast(box.checked ? whenOn : whenOff);
        } catch (error) {
          box.checked = !box.checked;
          toast(plainWords(error), 'error');
        }
      },
    }),
    label,
  );
}

export const renderSettings: Screen = (root, info) => {
  // Staff signed in with the PIN see what is set, and change nothing: that is the admin's, with the key.
  const staff = info.via === 'pin';
  let settings: GuiSettings | null = null;
  const keysBox = h('div', { id: 'keys' });
  const shownOnce = h('div', { id: 'new-key', 'aria-live': 'polite' });

  const showKeyOnce = (title: string, key: string): void => {
    replace(
      shownOnce,
      h(
        'div',
        { class: 'notice' },
        h('p', {}, h('strong', {}, title), ' Copy it now: it is shown only once.'),
        secretBox('The new key', key, 'new-key-value'),
        h('button', { type: 'button', class: 'button quiet small', onclick: () => shownOnce.replaceChildren() }, 'Done'),
      ),
    );
  };

  const loadKeys = async (): Promise<void> => {
    try {
      const keys = await call<ApiKey[]>('GET', '/api/v1/keys');
      const active = keys.filter((key) => !key.revokedAt);
      replace(
        keysBox,
        h(
          'table',
          { class: 'table', tabindex: '0', 'aria-label': 'API keys' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'Name'),
              h('th', {}, 'Key'),
              h('th', {}, 'Scope'),
              h('th', {}, 'Created'),
              h('th', {}, h('span', { class: 'visually-hidden' }, 'Actions')),
            ),
          ),
          h(
            'tbody',
            {},
            ...active.map((key) => {
              const own = settings && (key.id === settings.sessionKeyId || key.id === settings.guiKeyId);
              return h(
                'tr',
                { 'data-key': key.id },
                h('td', {}, key.name, own ? h('span', { class: 'hint' }, ' (this screen signs in with it)') : ''),
                h('td', { class: 'mono' }, `${key.prefix}…`),
                h('td', {}, key.scope),
                h('td', {}, key.expiresAt ? `${when(key.createdAt)}, ends ${when(key.expiresAt)}` : when(key.createdAt)),
                h(
                  'td',
                  { class: 'row-actions' },
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'button small',
                      onclick: async () => {
                        try {
                          const rotated = await call<ApiKey & { key: string }>('POST', `/api/v1/keys/${key.id}/rotate`, {});
                          showKeyOnce(`The new key for “${key.name}”.`, rotated.key);
                          void loadKeys();
                        } catch (error) {
                          toast(plainWords(error), 'error');
                        }
                      },
                    },
                    'Rotate',
                  ),
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'button danger small',
                      onclick: async () => {
                        if (!confirm(`Revoke “${key.name}”? Apps using it stop working at once.`)) return;
                        try {
                          await call('DELETE', `/api/v1/keys/${key.id}`);
                          void loadKeys();
                        } catch (error) {
                          toast(plainWords(error), 'error');
                        }
                      },
                    },
                    'Revoke',
                  ),
                ),
              );
            }),
          ),
        ),
      );
    } catch (error) {
      replace(keysBox, h('p', { class: 'error-box' }, plainWords(error)));
    }
  };

  const keyName = h('input', { id: 'key-name', class: 'big-input', maxlength: 100, required: true, placeholder: 'e.g. Till 2' });
  const keyScope = h(
    'select',
    { id: 'key-scope', class: 'big-select' },
    h('option', { value: 'standard' }, 'standard (try-ons, usage)'),
    h('option', { value: 'admin' }, 'admin (everything)'),
  );
  const createForm = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          const created = await call<ApiKey & { key: string }>('POST', '/api/v1/keys', { name: keyName.value, scope: keyScope.value });
          showKeyOnce(`The key “${created.name}”.`, created.key);
          keyName.value = '';
          void loadKeys();
        } catch (error) {
          toast(plainWords(error), 'error');
        }
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'key-name' }, 'New key name'), keyName),
    h('div', { class: 'field' }, h('label', { for: 'key-scope' }, 'Scope'), keyScope),
    h('button', { type: 'submit', class: 'button primary', id: 'create-key' }, 'Create key'),
  );

  const secretHolder = h('div', {});
  const showSecret = (secret: WebhookSecret): void =>
    replace(
      secretHolder,
      secretBox('Webhook secret', secret.secret, 'webhook-secret'),
      secret.previousSecret
        ? h('p', { class: 'hint' }, `The previous secret keeps signing until ${when(secret.previousExpiresAt)}.`)
        : null,
    );
  const revealButton = h(
    'button',
    {
      type: 'button',
      class: 'button',
      onclick: async () => {
        try {
          showSecret(await call<WebhookSecret>('GET', '/api/v1/webhooks/secret'));
        } catch (error) {
          toast(plainWords(error), 'error');
        }
      },
    },
    'Show the secret',
  );
  const rotateSecretButton = h(
    'button',
    {
      type: 'button',
      class: 'button',
      onclick: async () => {
        if (!confirm('Rotate the webhook secret? Receivers must switch to the new one; the old one keeps signing for a while.')) return;
        try {
          showSecret(await call<WebhookSecret>('POST', '/api/v1/webhooks/secret/rotate'));
        } catch (error) {
          toast(plainWords(error), 'error');
        }
      },
    },
    'Rotate',
  );

  const voucher = h('textarea', { id: 'voucher', class: 'big-input mono', rows: 3, placeholder: 'frv1.…', spellcheck: 'false' });
  const voucherResult = h('p', { 'aria-live': 'polite' });
  const voucherForm = h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          const redeemed = await call<Redemption>('POST', '/api/v1/credits/redeem', { voucher: voucher.value.trim() });
          voucherResult.className = 'notice';
          voucherResult.textContent = `${redeemed.creditsAdded} credits added; ${redeemed.creditsRemaining} available now.`;
          voucher.value = '';
        } catch (error) {
          voucherResult.className = 'error-box';
          voucherResult.textContent = plainWords(error);
        }
      },
    },
    h('label', { for: 'voucher' }, 'Voucher'),
    voucher,
    h('button', { type: 'submit', class: 'button primary' }, 'Redeem'),
    voucherResult,
  );

  const enginesBox = h('div', { id: 'engines' });
  const retentionBox = h('div', { id: 'retention' });
  const cameraBox = h('div', { id: 'camera-choices' });

  const pin = h('input', {
    id: 'set-pin',
    type: 'password',
    inputmode: 'numeric',
    autocomplete: 'new-password',
    maxlength: 12,
    class: 'big-input',
  });
  const pinForm = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          await call('PUT', '/gui/api/pin', { pin: pin.value });
          pin.value = '';
          toast('The staff PIN is set.');
        } catch (error) {
          toast(plainWords(error), 'error');
        }
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'set-pin' }, 'New staff PIN (4 to 12 digits)'), pin),
    h('button', { type: 'submit', class: 'button primary' }, 'Set PIN'),
  );

  const adminOnly = staff
    ? h(
        'p',
        { class: 'warning-box', id: 'staff-note' },
        'API keys, the webhook secret, vouchers, the staff PIN and the shop’s choices are changed by the admin: sign out and sign in with the admin key.',
      )
    : null;
  replace(
    root,
    h('h1', {}, 'Settings'),
    adminOnly,
    staff
      ? h(
          'div',
          { class: 'settings-grid' },
          section('engines-section', 'Engines', enginesBox),
          section('camera-section', 'Camera', cameraBox),
          section('retention-section', 'Data retention', retentionBox),
        )
      : h(
          'div',
          { class: 'settings-grid' },
          section(
            'keys-section',
            'API keys',
            h('p', { class: 'hint' }, 'Apps (a till, the web shop) call the appliance with a key.'),
            shownOnce,
            keysBox,
            createForm,
          ),
          section('engines-section', 'Engines', enginesBox),
          section('camera-section', 'Camera', cameraBox),
          section('voucher-section', 'Redeem a voucher', voucherForm),
          section(
            'webhook-section',
            'Webhook secret',
            h('p', { class: 'hint' }, 'Apps check that webhooks come from this appliance with it.'),
            secretHolder,
            h('div', { class: 'actions' }, revealButton, rotateSecretButton),
          ),
          section('retention-section', 'Data retention', retentionBox),
          section('pin-section', 'Staff PIN', pinForm),
        ),
  );

  call<GuiSettings>('GET', '/gui/api/settings')
    .then((loaded) => {
      settings = loaded;
      replace(
        retentionBox,
        h('p', {}, `Photos and results are deleted ${loaded.retentionDays} days after a try-on.`),
        h(
          'p',
          {},
          loaded.eraseInputsWhenDone
            ? 'Customer photos are deleted as soon as each try-on ends.'
            : 'Customer photos are kept until then, unless erased by hand (Try on or History).',
        ),
        h('p', { class: 'hint' }, 'These are set when the appliance starts (--retention-days, --erase-inputs); see the README.'),
        choiceBox(
          'eraseOnNewCustomer',
          'erase-on-new-customer',
          ' “New customer” also erases the previous customer’s photos',
          loaded.eraseOnNewCustomer,
          staff,
          ['New customer now erases the previous customer’s photos.', 'New customer now only clears the screen.'],
        ),
        staff ? h('p', { class: 'hint' }, 'Only the admin can change this.') : null,
        h('p', { class: 'hint' }, `fittingroom ${loaded.version}`),
      );
      replace(
        cameraBox,
        h('p', {}, 'The guide on the camera tells the customer where to stand; staff take the photo with the button.'),
        choiceBox(
          'autoCapture',
          'auto-capture',
          ' Take the photo by itself once the guide says the customer stands right (after the 3-2-1)',
          loaded.autoCapture,
          staff,
          ['The camera now takes the photo by itself.', 'Staff now take the photo with the button.'],
        ),
        staff ? h('p', { class: 'hint' }, 'Only the admin can change this.') : null,
      );
    })
    .catch((error: unknown) => replace(retentionBox, h('p', { class: 'error-box' }, plainWords(error))))
    .finally(() => {
      if (!staff) void loadKeys();
    });

  call<Engine[]>('GET', '/api/v1/engines')
    .then((engines) =>
      replace(
        enginesBox,
        engines.length === 0
          ? h('p', { class: 'warning-box' }, 'No try-on engine is installed yet, so try-ons cannot start.')
          : h(
              'ul',
              { class: 'engine-list' },
              ...engines.map((engine) =>
                h(
                  'li',
                  { 'data-engine': engine.id },
                  h('strong', {}, engine.name),
                  h('span', { class: `badge ${engine.ready ? 'badge-complete' : 'badge-failed'}` }, engine.ready ? 'Ready' : 'Not ready'),
                  h(
                    'span',
                    { class: 'hint' },
                    ` ${engine.device} · ${engine.typicalSeconds > 0 ? `about ${engine.typicalSeconds} s a try-on` : 'time not measured yet'} · ${engine.resolution.width}×${engine.resolution.height}`,
                  ),
                  engine.reason && h('p', { class: 'hint' }, engine.reason),
                ),
              ),
            ),
      ),
    )
    .catch((error: unknown) => replace(enginesBox, h('p', { class: 'error-box' }, plainWords(error))));
};
