/**
 * Try on: the customer's photo (camera or file), one to four garments (from
 * the catalogue or a photo), size, usual size, fit and styling; then the live
 * stage and progress, the result beside the original with a before/after
 * slider, save, and erasing the customer's photos with one tap.
 */
import type { Engine, TryOn } from '../../client/index.ts';
import type { GarmentView, GuiSettings } from '../../server/gui/contract.ts';
import { call, plainWords } from '../api.ts';
import { cameraProblem, openCamera, type CameraView } from '../camera.ts';
import { dataUrlOf, filePicker, h, replace, shrinkPhoto, toast } from '../dom.ts';
import { watchFraming } from '../framing.ts';
import { garmentWithCode, matchesGarment } from '../garments.ts';
import { EU_SIZES, FITS, LETTER_SIZES, STYLING, WAIST_SIZES, sizeStep } from '../sizes.ts';
import type { Screen } from '../main.ts';

const MAX_ITEMS = 4;
/** With auto-capture on, the photo is taken after this many OKs from the framing guide in a row. */
const AUTO_CAPTURE_OKS = 2;
const STAGES: Record<string, string> = {
  queued: 'Waiting for its turn',
  preprocessing: 'Reading the photos',
  generating: 'Dressing the customer',
  finishing: 'Finishing the picture',
};

interface Picked {
  key: string;
  label: string;
  url: string;
  category: string;
  sizes: string[];
  data: () => Promise<string>;
  /** Uploaded pictures are the customer's, erased with the customer's photos. */
  uploaded: boolean;
}

/** Of `sizes`, the one nearest to `usual` on the size ladder (the first of equals). */
function nearestSize(usual: string, sizes: readonly string[]): string {
  const target = sizeStep(usual) ?? 0;
  let best = sizes[0]!;
  for (const candidate of sizes) {
    if (Math.abs((sizeStep(candidate) ?? Infinity) - target) < Math.abs((sizeStep(best) ?? Infinity) - target)) best = candidate;
  }
  return best;
}

function sizeSelect(id: string, value: string, preferred: string[] = []): HTMLSelectElement {
  const select = h('select', { id, class: 'big-select' });
  const group = (label: string, sizes: readonly string[]): HTMLOptGroupElement =>
    h('optgroup', { label }, ...sizes.map((size) => h('option', { value: size, selected: size === value }, size)));
  if (preferred.length > 0) select.append(group('This garment', preferred));
  select.append(group('Letter', LETTER_SIZES), group('EU', EU_SIZES), group('Waist', WAIST_SIZES));
  select.value = value;
  return select;
}

/** Styling that excludes its pair: a garment is tucked or untucked, open or closed. */
const OPPOSITE: Record<string, string> = { tucked: 'untucked', untucked: 'tucked', open: 'closed', closed: 'open' };

function choiceRow(name: string, values: readonly string[], selected: Set<string>, multiple: boolean): HTMLElement {
  const buttons = values.map((value) =>
    h(
      'button',
      {
        type: 'button',
        class: 'chip',
        'data-value': value,
        'aria-pressed': String(selected.has(value)),
        onclick: (event: Event) => {
          const button = event.currentTarget as HTMLButtonElement;
          if (multiple) {
            if (selected.has(value)) selected.delete(value);
            else {
              selected.add(value);
              // Either-or pairs: choosing one clears the other.
              const opposite = OPPOSITE[value];
              if (opposite) selected.delete(opposite);
            }
          } else {
            selected.clear();
            selected.add(value);
          }
          for (const other of buttons) other.setAttribute('aria-pressed', String(selected.has(other.dataset.value!)));
          button.focus();
        },
      },
      value.replace('-', ' '),
    ),
  );
  return h('div', { class: 'chips', role: 'group', 'aria-label': name }, ...buttons);
}

/**
 * The customer at the counter: kept while the page lives, so that looking at History or Usage and coming back
 * loses no photo, garment, choice or try-on in progress. Erasing the customer's photos clears it.
 */
const customer = {
  selfie: null as { blob: Blob; url: string } | null,
  picked: [] as Picked[],
  genIds: [] as string[],
  objectUrls: new Set<string>(),
  fit: new Set<string>(['regular']),
  styling: new Set<string>(),
  size: 'M',
  personSize: 'M',
  /** Staff chose the garment size themselves; until then it follows the customer's usual size. */
  sizeChosen: false,
  engine: '',
};

/** The customer's try-ons (ids only, never photos) survive a reload of the page, for as long as the tab lives. */
const TRY_ONS_KEY = 'fittingroom.customer.tryOns';
try {
  customer.genIds.push(...(JSON.parse(sessionStorage.getItem(TRY_ONS_KEY) ?? '[]') as string[]));
} catch {
  // Private browsing or a damaged entry: start with no try-on.
}
const rememberTryOns = (): void => {
  try {
    sessionStorage.setItem(TRY_ONS_KEY, JSON.stringify(customer.genIds));
  } catch {
    // Storage refused: the try-ons are still in History.
  }
};

/** A button that stays disabled while its action runs, and says in plain words why an action failed. */
function actionButton(attributes: { class: string; id: string }, label: string, action: () => Promise<void>): HTMLButtonElement {
  const button: HTMLButtonElement = h(
    'button',
    {
      type: 'button',
      ...attributes,
      onclick: async () => {
        button.disabled = true;
        try {
          await action();
        } catch (error) {
          toast(plainWords(error), 'error');
        } finally {
          button.disabled = false;
        }
      },
    },
    label,
  );
  return button;
}

/** Smooth scrolling, unless the person asked for less motion. */
const smoothly = (): ScrollBehavior => (matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth');

/** The Try on screen. */
export const renderTryOn: Screen = (root) => {
  let camera: CameraView | null = null;
  let stopFraming: (() => void) | null = null;
  const { picked, genIds, objectUrls, fit, styling } = customer;
  let catalogue: GarmentView[] = [];
  let engines: Engine[] = [];
  /** Whether the engine list has come and shows none ready (then the hint under Start must not say ready). */
  let noEngineReady = false;
  let polling = true;
  /** The Idempotency-Key of a submit that got no reply, reused when staff press Start again. */
  let retryKey: string | null = null;
  /** Which follow() is current: a new customer (or a new try-on) ends the one before. */
  let following = 0;

  const objectUrl = (blob: Blob): string => {
    const url = URL.createObjectURL(blob);
    objectUrls.add(url);
    return url;
  };

  // 1. The customer's photo.
  const photoArea = h('div', { class: 'photo-area' });
  const cameraMessage = h('p', { class: 'error-box', role: 'alert', hidden: true });
  const [chooseFileButton, fileInput] = filePicker('choose-selfie', 'selfie-file', 'Choose a photo file');
  const startCameraButton = h('button', { type: 'button', class: 'button', id: 'start-camera' }, 'Use the camera');
  const captureButton = h('button', { type: 'button', class: 'button primary', id: 'take-photo', hidden: true }, 'Take the photo');
  const retakeButton = h('button', { type: 'button', class: 'button', id: 'retake', hidden: true }, 'Take another');

  const showSelfie = (): void => {
    if (customer.selfie) {
      replace(
        photoArea,
        h('img', { src: customer.selfie.url, alt: 'The customer’s photo', class: 'selfie-preview', id: 'selfie-preview' }),
      );
      captureButton.hidden = true;
      startCameraButton.hidden = true;
      retakeButton.hidden = false;
    } else {
      replace(photoArea, h('div', { class: 'placeholder' }, 'No photo yet. Use the camera or choose a photo file.'));
      startCameraButton.hidden = false;
      retakeButton.hidden = true;
    }
    updateStart();
  };

  const stopCamera = (): void => {
    stopFraming?.();
    stopFraming = null;
    camera?.advice.remove();
    camera?.stop();
    camera = null;
    captureButton.hidden = true;
    captureButton.classList.remove('ready');
  };

  const startCamera = async (): Promise<void> => {
    cameraMessage.hidden = true;
    startCameraButton.disabled = true;
    try {
      const opened = await openCamera();
      if (!polling) {
        // The screen was left while the camera was starting.
        opened.stop();
        return;
      }
      camera = opened;
      replace(photoArea, opened.element);
      photoArea.before(opened.advice);
      // The shop may let the camera take the photo by itself: once the guide says OK twice running (the
      // customer has stopped moving), the same countdown as the button's starts.
      const auto = (await call<GuiSettings>('GET', '/gui/api/settings').catch(() => null))?.autoCapture === true;
      if (camera !== opened) return; // stopped (or the screen left) meanwhile
      let oks = 0;
      stopFraming = watchFraming(opened, (advice) => {
        opened.showAdvice(advice);
        captureButton.classList.toggle('ready', advice?.advice === 'ok');
        oks = advice?.advice === 'ok' ? oks + 1 : 0;
        if (auto && oks === AUTO_CAPTURE_OKS && !captureButton.disabled) captureButton.click();
      });
      captureButton.hidden = false;
      startCameraButton.hidden = true;
      captureButton.focus();
    } catch (error) {
      cameraMessage.textContent = cameraProblem(error);
      cameraMessage.hidden = false;
    } finally {
      startCameraButton.disabled = false;
    }
  };
  startCameraButton.onclick = () => void startCamera();
  captureButton.onclick = async () => {
    if (!camera) return;
    captureButton.disabled = true;
    await camera.countdown(3);
    captureButton.disabled = false;
    if (!camera) return;
    const blob = await camera.capture();
    stopCamera();
    customer.selfie = { blob, url: objectUrl(blob) };
    showSelfie();
    focusNextStep();
  };
  retakeButton.onclick = () => {
    customer.selfie = null;
    showSelfie();
    void startCamera();
  };
  fileInput.onchange = async () => {
    const chosen = fileInput.files?.[0];
    fileInput.value = '';
    if (!chosen) return;
    stopCamera();
    replace(photoArea, h('div', { class: 'placeholder' }, 'Reading the photo…'));
    const file = await shrinkPhoto(chosen);
    customer.selfie = { blob: file, url: objectUrl(file) };
    showSelfie();
    focusNextStep();
  };

  const photoPanel = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'photo-title' },
    h('h2', { id: 'photo-title' }, '1 · Customer photo'),
    photoArea,
    cameraMessage,
    h('div', { class: 'actions' }, startCameraButton, captureButton, retakeButton, chooseFileButton, fileInput),
  );

  // 2. Garments.
  const search = h('input', {
    type: 'search',
    placeholder: 'Search, or scan a barcode',
    'aria-label': 'Search the catalogue',
    class: 'big-input',
  });
  const grid = h('div', { class: 'garment-grid', id: 'pick-grid' });
  const pickedList = h('div', { class: 'picked', 'aria-live': 'polite' });
  const [garmentFileButton, garmentFile] = filePicker('use-garment-photo', 'garment-file', 'Use a garment photo');

  const renderPicked = (): void => {
    replace(
      pickedList,
      picked.length === 0
        ? h('p', { class: 'hint' }, `Pick up to ${MAX_ITEMS} garments.`)
        : h(
            'ul',
            { class: 'picked-list' },
            ...picked.map((item) =>
              h(
                'li',
                {},
                h('img', { src: item.url, alt: '' }),
                h('span', {}, item.label),
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'button quiet small',
                    'aria-label': `Remove ${item.label}`,
                    onclick: () => {
                      picked.splice(picked.indexOf(item), 1);
                      renderGrid();
                      renderPicked();
                      refreshSizes();
                    },
                  },
                  'Remove',
                ),
              ),
            ),
          ),
    );
    updateStart();
  };

  const renderGrid = (): void => {
    const query = search.value.trim().toLowerCase();
    const shown = catalogue.filter((garment) => matchesGarment(garment, query));
    replace(
      grid,
      ...(catalogue.length === 0
        ? [h('p', { class: 'hint' }, 'The catalogue is empty. Add garments under Catalogue, or use a photo.')]
        : shown.map((garment) => {
            const chosen = picked.some((item) => item.key === garment.id);
            return h(
              'button',
              {
                type: 'button',
                class: 'garment-tile',
                'aria-pressed': String(chosen),
                'data-garment': garment.id,
                onclick: () => {
                  const index = picked.findIndex((item) => item.key === garment.id);
                  const adding = index < 0 && picked.length < MAX_ITEMS;
                  if (index >= 0) picked.splice(index, 1);
                  else if (picked.length >= MAX_ITEMS) toast(`At most ${MAX_ITEMS} garments per try-on.`, 'error');
                  else
                    picked.push({
                      key: garment.id,
                      label: garment.name,
                      url: garment.imageUrl,
                      category: garment.category,
                      sizes: garment.sizes,
                      uploaded: false,
                      data: async () => dataUrlOf(await (await fetch(garment.imageUrl, { credentials: 'same-origin' })).blob()),
                    });
                  renderGrid();
                  renderPicked();
                  refreshSizes();
                  // The grid was drawn again: focus goes on to the next step, or back to this garment's new tile.
                  if (adding) focusNextStep();
                  else grid.querySelector<HTMLElement>(`[data-garment="${garment.id}"]`)?.focus();
                },
              },
              h('img', { src: garment.imageUrl, alt: '', loading: 'lazy' }),
              h('span', { class: 'tile-name' }, garment.name),
              h('span', { class: 'tile-meta' }, `${garment.category} · ${garment.sizes.join(' ') || 'no sizes'}`),
            );
          })),
    );
  };
  search.oninput = renderGrid;
  // A barcode scanner types the code and Enter: the garment with that SKU or barcode (or the only match) is picked.
  search.onkeydown = (event: KeyboardEvent) => {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    const shown = catalogue.filter((garment) => matchesGarment(garment, search.value));
    const found = garmentWithCode(catalogue, search.value) ?? (shown.length === 1 ? shown[0] : undefined);
    if (!found) {
      toast(shown.length === 0 ? 'No garment has that name, SKU or barcode.' : 'Several garments match: pick one.', 'error');
      return;
    }
    search.value = '';
    renderGrid();
    if (picked.some((item) => item.key === found.id)) {
      toast(`“${found.name}” is already picked.`);
      return;
    }
    grid.querySelector<HTMLButtonElement>(`[data-garment="${found.id}"]`)?.click();
  };
  garmentFile.onchange = async () => {
    const chosen = garmentFile.files?.[0];
    garmentFile.value = '';
    if (!chosen) return;
    const file = await shrinkPhoto(chosen);
    if (picked.length >= MAX_ITEMS) {
      toast(`At most ${MAX_ITEMS} garments per try-on.`, 'error');
      return;
    }
    picked.push({
      key: `upload-${objectUrls.size}`,
      label: chosen.name || 'Garment photo',
      url: objectUrl(file),
      category: 'auto',
      sizes: [],
      uploaded: true,
      data: () => dataUrlOf(file),
    });
    renderPicked();
    focusNextStep();
  };

  const garmentPanel = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'garment-title' },
    h('h2', { id: 'garment-title' }, '2 · Garments'),
    search,
    grid,
    h('div', { class: 'actions' }, garmentFileButton, garmentFile),
    pickedList,
  );

  // 3. Size, fit, styling.
  const sizeHolder = h('div', {});
  const personSizeHolder = h('div', {});
  let size = sizeSelect('size', customer.size);
  const personSize = sizeSelect('person-size', customer.personSize);
  const engineSelect = h('select', { id: 'engine', class: 'big-select' });
  engineSelect.onchange = () => (customer.engine = engineSelect.value);
  const engineNote = h('p', { class: 'warning-box', hidden: true });
  const showSize = (): void => {
    size.onchange = () => {
      customer.size = size.value;
      customer.sizeChosen = true;
    };
    replace(sizeHolder, h('label', { for: 'size' }, 'Garment size'), size);
  };
  // The garment's sizes in stock come first. Unless staff chose one, the garment size is the customer's usual
  // size, or the nearest size the garments come in.
  const refreshSizes = (): void => {
    const preferred = [...new Set(picked.flatMap((item) => item.sizes))];
    const wanted = customer.sizeChosen ? size.value : personSize.value;
    customer.size = preferred.length === 0 || preferred.includes(wanted) ? wanted : nearestSize(wanted, preferred);
    size = sizeSelect('size', customer.size, preferred);
    showSize();
  };
  showSize();
  replace(personSizeHolder, h('label', { for: 'person-size' }, 'Customer’s usual size'), personSize);
  personSize.onchange = () => {
    customer.personSize = personSize.value;
    refreshSizes();
  };

  const startButton = h('button', { type: 'button', class: 'button primary huge', id: 'start-try-on', disabled: true }, 'Start the try-on');
  /**
   * Keyboard focus moves on with the work (a photo, then a garment, then Start), so that staff reach Start in a
   * few key presses: the first thing still missing, or Start once nothing is (sizes and fit have defaults).
   */
  const focusNextStep = (): void => {
    const next = !customer.selfie
      ? startCameraButton.hidden
        ? chooseFileButton
        : startCameraButton
      : picked.length === 0
        ? (grid.querySelector<HTMLElement>('button.garment-tile') ?? garmentFileButton)
        : startButton;
    next.focus();
  };
  const startHint = h('p', { class: 'hint', id: 'start-hint' });
  function updateStart(): void {
    const missing = [!customer.selfie && 'a customer photo', picked.length === 0 && 'a garment'].filter(Boolean);
    startButton.disabled = missing.length > 0;
    startHint.textContent =
      missing.length > 0
        ? `Still needed: ${missing.join(' and ')}.`
        : noEngineReady
          ? 'The photo and garments are chosen, but no try-on engine is ready.'
          : 'Ready.';
  }

  const optionsPanel = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'options-title' },
    h('h2', { id: 'options-title' }, '3 · Size and fit'),
    h('div', { class: 'two-columns' }, sizeHolder, personSizeHolder),
    h('p', { class: 'label' }, 'Fit'),
    choiceRow('Fit', FITS, fit, false),
    h('p', { class: 'label' }, 'Styling'),
    choiceRow('Styling', STYLING, styling, true),
    h('label', { for: 'engine' }, 'Engine'),
    engineSelect,
    engineNote,
    startButton,
    startHint,
  );

  // The result.
  const resultSection = h('section', { class: 'panel result', id: 'result', 'aria-labelledby': 'result-title', hidden: true });

  const progressView = (view: TryOn): HTMLElement => {
    const stage = STAGES[view.stage ?? 'queued'] ?? 'Working';
    const percent = Math.round((view.progress ?? 0) * 100);
    return h(
      'div',
      { class: 'progress-view' },
      h('p', { class: 'stage', id: 'stage' }, `${stage}…`),
      h('progress', { max: 100, value: percent, 'aria-label': 'Progress' }),
      h('p', { class: 'hint' }, `${percent} %`),
    );
  };

  /** Before and after on one picture: drag on it (or use the slider) to move the line between them. */
  const compare = (before: string, after: string): HTMLElement => {
    const slider = h('input', { type: 'range', min: 0, max: 100, value: 50, 'aria-label': 'Before and after', class: 'compare-slider' });
    const afterImage = h('img', { src: after, alt: 'The try-on result', class: 'compare-after', id: 'result-image' });
    const box = h(
      'div',
      { class: 'compare', id: 'compare' },
      h('img', { src: before, alt: 'The original photo', class: 'compare-before' }),
      afterImage,
      h('div', { class: 'compare-line' }),
    );
    const set = (): void => {
      box.style.setProperty('--split', `${slider.value}%`);
    };
    const drag = (event: PointerEvent): void => {
      if (event.type === 'pointermove' && !box.hasPointerCapture(event.pointerId)) return;
      const bounds = box.getBoundingClientRect();
      slider.value = String(Math.round(Math.min(1, Math.max(0, (event.clientX - bounds.left) / bounds.width)) * 100));
      set();
    };
    box.onpointerdown = (event: PointerEvent) => {
      // Not the browser's own dragging of the image.
      event.preventDefault();
      box.setPointerCapture(event.pointerId);
      drag(event);
    };
    box.onpointermove = drag;
    slider.oninput = set;
    set();
    return h(
      'div',
      { class: 'compare-wrap' },
      h('div', { class: 'compare-labels' }, h('span', {}, 'Before'), h('span', {}, 'After')),
      box,
      slider,
    );
  };

  const eraseButton = (): HTMLButtonElement =>
    actionButton({ class: 'button danger', id: 'erase' }, 'Erase the customer’s photos', async () => {
      for (const id of genIds) await call('DELETE', `/api/v1/try-on/${id}`);
      genIds.length = 0;
      rememberTryOns();
      stopCamera();
      customer.selfie = null;
      for (const item of [...picked]) if (item.uploaded) picked.splice(picked.indexOf(item), 1);
      for (const url of objectUrls) URL.revokeObjectURL(url);
      objectUrls.clear();
      resultSection.hidden = true;
      resultSection.replaceChildren();
      showSelfie();
      renderPicked();
      toast('The customer’s photos are erased.');
    });

  /**
   * The next customer: photo, garments, sizes, choices and result cleared in one tap; the previous customer's
   * photos are erased too when the shop chose that in Settings.
   */
  const newCustomer = async (): Promise<void> => {
    const settings = await call<GuiSettings>('GET', '/gui/api/settings').catch(() => null);
    let erased = true;
    if (settings?.eraseOnNewCustomer) {
      for (const id of genIds) await call('DELETE', `/api/v1/try-on/${id}`).catch(() => (erased = false));
    }
    following++;
    stopCamera();
    for (const url of objectUrls) URL.revokeObjectURL(url);
    objectUrls.clear();
    Object.assign(customer, { selfie: null, size: 'M', personSize: 'M', sizeChosen: false });
    picked.length = 0;
    genIds.length = 0;
    rememberTryOns();
    fit.clear();
    fit.add('regular');
    styling.clear();
    for (const button of root.querySelectorAll<HTMLButtonElement>('.chips button[data-value]')) {
      const group = button.parentElement?.getAttribute('aria-label');
      const chosen = group === 'Fit' ? fit : group === 'Styling' ? styling : null;
      if (chosen) button.setAttribute('aria-pressed', String(chosen.has(button.dataset.value!)));
    }
    personSize.value = 'M';
    resultSection.hidden = true;
    resultSection.replaceChildren();
    showSelfie();
    renderGrid();
    renderPicked();
    refreshSizes();
    focusNextStep();
    if (settings?.eraseOnNewCustomer && !erased) toast('Some of the previous customer’s photos could not be erased; see History.', 'error');
    else
      toast(
        settings?.eraseOnNewCustomer ? 'Ready for the next customer; the last one’s photos are erased.' : 'Ready for the next customer.',
      );
  };
  const newCustomerButton = h(
    'button',
    { type: 'button', class: 'button', id: 'new-customer', onclick: () => void newCustomer() },
    'New customer',
  );

  // The QR code the customer's phone scans to download the picture (a link that works for an hour).
  const takeHome = h('div', { class: 'take-home', id: 'take-home', hidden: true });
  const takeHomeButton = (genId: string): HTMLButtonElement =>
    actionButton({ class: 'button primary', id: 'take-home-button' }, 'Take it home (QR code)', async () => {
      const share = await call<{ url: string; expiresAt: string; qrSvg: string; reachable: boolean }>(
        'POST',
        `/gui/api/try-on/${genId}/share`,
      );
      const until = new Date(share.expiresAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
      replace(
        takeHome,
        h('img', {
          src: `data:image/svg+xml;base64,${btoa(share.qrSvg)}`,
          alt: 'QR code: scan it with your phone to download the picture',
          class: 'qr',
          id: 'qr',
        }),
        h(
          'p',
          {},
          'Scan with your phone’s camera to download the picture (on the shop’s Wi-Fi). ',
          h('span', { class: 'hint' }, `The link works until ${until}.`),
        ),
        h('p', { class: 'mono' }, share.url),
      );
      if (!share.reachable)
        takeHome.append(
          h(
            'p',
            { class: 'warning-box', id: 'take-home-warning' },
            'Phones cannot open this link yet: the appliance listens only on this PC. Start it with --host 0.0.0.0 (or set --public-url) to let phones on the shop’s network reach it.',
          ),
        );
      takeHome.hidden = false;
      takeHome.scrollIntoView({ behavior: smoothly(), block: 'nearest' });
    });

  const showResult = (view: TryOn): void => {
    const title = h('h2', { id: 'result-title' }, 'Result');
    if (view.status === 'pending') {
      replace(resultSection, title, progressView(view));
      return;
    }
    if (view.status === 'complete') {
      const imageUrl = `/api/v1/try-on/${view.genId}/image`;
      const engine = engines.find((candidate) => candidate.id === view.engine);
      const madeBy = `Made by ${engine?.name ?? view.engine}.${engine?.about ? ` ${engine.about}` : ''}`;
      replace(
        resultSection,
        title,
        h('p', { class: 'hint', id: 'result-engine' }, madeBy),
        // After a reload the photo is gone from the page (it is never kept in the browser): the result alone.
        customer.selfie
          ? compare(customer.selfie.url, imageUrl)
          : h(
              'div',
              { class: 'compare-wrap' },
              h('img', { src: imageUrl, alt: 'The try-on result', class: 'result-alone', id: 'result-image' }),
            ),
        h(
          'div',
          { class: 'actions' },
          takeHomeButton(view.genId),
          h('button', { type: 'button', class: 'button', id: 'print', onclick: () => window.print() }, 'Print'),
          h('a', { class: 'button', href: imageUrl, download: `try-on-${view.genId}`, id: 'save' }, 'Save the picture'),
          eraseButton(),
        ),
        takeHome,
      );
      // The result is what everyone is waiting for: bring it into view and put the focus on it.
      resultSection.scrollIntoView({ behavior: smoothly(), block: 'start' });
      title.tabIndex = -1;
      title.focus({ preventScroll: true });
      return;
    }
    const why = view.status === 'failed' ? plainWords(view.error ?? { code: 'engine_failed' }) : 'The try-on was canceled.';
    replace(resultSection, title, h('p', { class: 'error-box', id: 'result-error' }, why), h('div', { class: 'actions' }, eraseButton()));
  };

  /**
   * Shows a try-on until it ends. A failed poll (the appliance restarting, the network dropping) is tried again
   * every 2 s while the screen is open: the try-on goes on without the screen, and its result is shown when it
   * comes. Only a try-on that is gone (erased) ends the wait.
   */
  const follow = async (genId: string): Promise<void> => {
    const mine = ++following;
    const current = () => polling && mine === following;
    let wait = '';
    while (current()) {
      try {
        const view = await call<TryOn>('GET', `/api/v1/try-on/${genId}${wait}`);
        if (!current()) return;
        showResult(view);
        if (view.status !== 'pending') return;
        wait = '?wait=2';
      } catch (error) {
        if ((error as { status?: number }).status === 404) throw error;
        if (!current()) return;
        replace(
          resultSection,
          h('h2', { id: 'result-title' }, 'Result'),
          h('p', { class: 'stage', id: 'stage' }, 'The appliance cannot be reached; trying again…'),
        );
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  };

  startButton.onclick = async () => {
    if (!customer.selfie || picked.length === 0) return;
    startButton.disabled = true;
    resultSection.hidden = false;
    replace(resultSection, h('h2', { id: 'result-title' }, 'Result'), h('p', { class: 'stage' }, 'Sending the photos…'));
    resultSection.scrollIntoView({ behavior: smoothly(), block: 'start' });
    try {
      const body: Record<string, unknown> = {
        selfie: await dataUrlOf(customer.selfie.blob),
        items: await Promise.all(picked.map((item) => item.data())),
        categories: picked.map((item) => item.category),
        size: size.value,
        personSize: personSize.value,
        fit: [...fit][0] ?? 'regular',
        styling: [...styling],
      };
      if (engineSelect.value) body.engine = engineSelect.value;
      // A submit whose reply was lost (the network, a restart) is sent again with the same key: the appliance
      // answers with the try-on it already has, and nothing is charged twice.
      retryKey ??= crypto.randomUUID();
      let accepted: { genId: string };
      try {
        accepted = await call<{ genId: string }>('POST', '/api/v1/try-on', body, { 'idempotency-key': retryKey });
        retryKey = null;
      } catch (error) {
        if ((error as { status?: number }).status !== 0) retryKey = null;
        throw error;
      }
      genIds.push(accepted.genId);
      rememberTryOns();
      await follow(accepted.genId);
    } catch (error) {
      replace(
        resultSection,
        h('h2', { id: 'result-title' }, 'Result'),
        h('p', { class: 'error-box', id: 'result-error' }, plainWords(error)),
      );
    } finally {
      updateStart();
    }
  };

  replace(
    root,
    h('h1', { class: 'visually-hidden' }, 'Try on'),
    h('div', { class: 'screen-actions' }, newCustomerButton),
    h('div', { class: 'try-on-grid' }, photoPanel, garmentPanel, optionsPanel),
    resultSection,
  );
  showSelfie();
  renderPicked();
  // Back on the screen with a try-on under way or done: show it (and follow it until it ends).
  const last = genIds[genIds.length - 1];
  if (last) {
    resultSection.hidden = false;
    follow(last).catch((error: unknown) => {
      // Erased meanwhile (History, or another screen): nothing to show.
      if ((error as { status?: number }).status === 404) {
        genIds.length = 0;
        rememberTryOns();
        resultSection.hidden = true;
        return;
      }
      replace(
        resultSection,
        h('h2', { id: 'result-title' }, 'Result'),
        h('p', { class: 'error-box', id: 'result-error' }, plainWords(error)),
      );
    });
  }

  call<GarmentView[]>('GET', '/gui/api/garments')
    .then((list) => {
      catalogue = list;
      renderGrid();
    })
    .catch((error: unknown) => replace(grid, h('p', { class: 'error-box' }, plainWords(error))));
  call<Engine[]>('GET', '/api/v1/engines')
    .then((list) => {
      engines = list;
      replace(
        engineSelect,
        h('option', { value: '' }, 'Best available'),
        ...engines.map((engine) =>
          h(
            'option',
            { value: engine.id, disabled: !engine.ready },
            `${engine.name} (${engine.device}${engine.ready ? '' : ', not ready'})`,
          ),
        ),
      );
      if (engines.some((engine) => engine.id === customer.engine && engine.ready)) engineSelect.value = customer.engine;
      const ready = engines.filter((engine) => engine.ready);
      if (ready.length === 0) {
        engineNote.textContent = 'No try-on engine is ready yet, so a try-on cannot start. See Settings → Engines.';
        engineNote.hidden = false;
      }
      noEngineReady = ready.length === 0;
      updateStart();
    })
    .catch((error: unknown) => {
      engineNote.textContent = plainWords(error);
      engineNote.hidden = false;
    });

  return () => {
    polling = false;
    stopCamera();
  };
};
