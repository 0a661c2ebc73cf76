/**
 * Catalogue: the shop's garments (photo, name, category, sizes), kept on the
 * appliance; searchable, and added or removed with large touch targets.
 */
import type { GarmentView } from '../../server/gui/contract.ts';
import { call, plainWords } from '../api.ts';
import { dataUrlOf, filePicker, h, replace, toast } from '../dom.ts';
import { CATEGORIES, EU_SIZES, LETTER_SIZES, WAIST_SIZES } from '../sizes.ts';
import type { Screen } from '../main.ts';
import { matchesGarment } from '../garments.ts';

/** The Catalogue screen. */
export const renderCatalogue: Screen = (root) => {
  let garments: GarmentView[] = [];
  const list = h('div', { class: 'garment-grid catalogue', id: 'catalogue-grid' });
  const search = h('input', {
    type: 'search',
    placeholder: 'Search by name, SKU, barcode or size',
    'aria-label': 'Search the catalogue',
    class: 'big-input',
    id: 'catalogue-search',
  });

  const draw = (): void => {
    const query = search.value.trim().toLowerCase();
    const shown = garments.filter((garment) => matchesGarment(garment, query));
    if (garments.length === 0) {
      replace(list, h('p', { class: 'hint' }, 'No garments yet. Add the first one with the form.'));
      return;
    }
    replace(
      list,
      ...shown.map((garment) =>
        h(
          'article',
          { class: 'garment-card', 'data-garment': garment.id },
          h('img', { src: garment.imageUrl, alt: '', loading: 'lazy' }),
          h('h2', { class: 'card-title' }, garment.name),
          h('p', { class: 'tile-meta' }, `${garment.category} · ${garment.sizes.join(' ') || 'no sizes'}`),
          (garment.sku || garment.barcode) &&
            h('p', { class: 'tile-meta mono' }, [garment.sku, garment.barcode].filter(Boolean).join(' · ')),
          h(
            'button',
            { type: 'button', class: 'button quiet small', 'aria-label': `Edit ${garment.name}`, onclick: () => startEditing(garment) },
            'Edit',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'button quiet small',
              'aria-label': `Remove ${garment.name}`,
              onclick: async () => {
                if (!confirm(`Remove “${garment.name}” from the catalogue?`)) return;
                try {
                  await call('DELETE', `/gui/api/garments/${garment.id}`);
                  garments = garments.filter((other) => other.id !== garment.id);
                  draw();
                } catch (error) {
                  toast(plainWords(error), 'error');
                }
              },
            },
            'Remove',
          ),
        ),
      ),
      shown.length === 0 && h('p', { class: 'hint' }, 'Nothing matches the search.'),
    );
  };
  search.oninput = draw;

  const name = h('input', { id: 'garment-name', class: 'big-input', required: true, maxlength: 100, autocomplete: 'off' });
  const sku = h('input', { id: 'garment-sku', class: 'big-input', maxlength: 64, autocomplete: 'off' });
  const barcode = h('input', {
    id: 'garment-barcode',
    class: 'big-input',
    maxlength: 64,
    autocomplete: 'off',
    inputmode: 'numeric',
    placeholder: 'Scan or type',
  });
  const category = h(
    'select',
    { id: 'garment-category', class: 'big-select' },
    // `auto` first, so a new garment is detected from its photo unless staff say what it is.
    ...CATEGORIES.map((value) => h('option', { value }, value === 'auto' ? 'auto (detect from the photo)' : value)),
  );
  const sizes = new Set<string>();
  const sizeChip = (size: string): HTMLButtonElement =>
    h(
      'button',
      {
        type: 'button',
        class: 'chip',
        'aria-pressed': 'false',
        'data-size': size,
        onclick: (event: Event) => {
          const chip = event.currentTarget as HTMLButtonElement;
          if (sizes.has(size)) sizes.delete(size);
          else sizes.add(size);
          chip.setAttribute('aria-pressed', String(sizes.has(size)));
        },
      },
      size,
    );
  const photo = h('input', {
    id: 'garment-photo',
    type: 'file',
    accept: 'image/jpeg,image/png,image/webp',
    required: true,
    class: 'file-input',
  });
  const formTitle = h('h2', { id: 'add-title' }, 'Add a garment');
  const PHOTO_LABEL = 'Photo (the garment alone, on a plain background)';
  const photoLabel = h('label', { for: 'garment-photo' }, PHOTO_LABEL);
  // While editing: every photo of the garment, to choose the one try-ons use, remove others, or add one.
  const photos = h('div', { class: 'garment-photos', hidden: true });
  const [addPhotoButton, addPhotoInput] = filePicker('add-photo', 'add-photo-file', 'Add another photo');
  const cancelButton = h('button', { type: 'button', class: 'button', id: 'cancel-edit', hidden: true }, 'Cancel');
  /** The garment being edited, or null while the form adds a new one. */
  let editing: GarmentView | null = null;
  const preview = h('img', { class: 'garment-preview', alt: '', hidden: true });
  photo.onchange = () => {
    const file = photo.files?.[0];
    if (preview.src) URL.revokeObjectURL(preview.src);
    preview.hidden = !file;
    if (file) preview.src = URL.createObjectURL(file);
  };
  const message = h('p', { class: 'error-box', role: 'alert', hidden: true });
  const addButton = h('button', { type: 'submit', class: 'button primary', id: 'add-garment' }, 'Add to the catalogue');
  const form = h(
    'form',
    {
      class: 'panel',
      'aria-labelledby': 'add-title',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        message.hidden = true;
        const file = photo.files?.[0];
        if (editing) {
          await saveEdit(editing, file);
          return;
        }
        if (!file) {
          message.textContent = 'Choose a photo of the garment.';
          message.hidden = false;
          return;
        }
        addButton.disabled = true;
        try {
          const created = await call<GarmentView>('POST', '/gui/api/garments', {
            name: name.value,
            category: category.value,
            sizes: [...sizes],
            sku: sku.value,
            barcode: barcode.value,
            image: await dataUrlOf(file),
          });
          garments = [created, ...garments];
          clearForm();
          draw();
          toast(`“${created.name}” is in the catalogue.`);
        } catch (error) {
          message.textContent = plainWords(error);
          message.hidden = false;
        } finally {
          addButton.disabled = false;
        }
      },
    },
    formTitle,
    h('label', { for: 'garment-name' }, 'Name'),
    name,
    h('label', { for: 'garment-sku' }, 'SKU (optional)'),
    sku,
    h('label', { for: 'garment-barcode' }, 'Barcode (optional)'),
    barcode,
    h('label', { for: 'garment-category' }, 'Category'),
    category,
    h('p', { class: 'label' }, 'Sizes in stock'),
    h('div', { class: 'chips', role: 'group', 'aria-label': 'Letter sizes' }, ...LETTER_SIZES.map(sizeChip)),
    h(
      'details',
      {},
      h('summary', {}, 'EU and waist sizes'),
      h(
        'div',
        { class: 'chips', role: 'group', 'aria-label': 'EU and waist sizes' },
        ...EU_SIZES.map(sizeChip),
        ...WAIST_SIZES.map(sizeChip),
      ),
    ),
    photoLabel,
    photo,
    preview,
    photos,
    message,
    h('div', { class: 'actions' }, addButton, cancelButton),
  );

  /** Shows the edited garment's photos; every change is saved at once and the card is drawn again. */
  const showPhotos = (garment: GarmentView): void => {
    const changed = (saved: GarmentView): void => {
      garments = garments.map((other) => (other.id === saved.id ? saved : other));
      if (editing?.id === saved.id) editing = saved;
      preview.src = saved.imageUrl;
      showPhotos(saved);
      draw();
    };
    const act = (work: () => Promise<GarmentView>, done: string) => async () => {
      try {
        changed(await work());
        toast(done);
      } catch (error) {
        toast(plainWords(error), 'error');
      }
    };
    replace(
      photos,
      h('p', { class: 'label' }, 'Photos (the first is the one try-ons use)'),
      h(
        'div',
        { class: 'photo-strip' },
        ...garment.photoUrls.map((url, n) =>
          h(
            'figure',
            { class: 'photo-choice' },
            h('img', { src: url, alt: n === 0 ? 'The photo try-ons use' : `Photo ${n + 1}` }),
            n === 0
              ? h('figcaption', { class: 'hint' }, 'Used for try-ons')
              : h(
                  'figcaption',
                  {},
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'button quiet small',
                      onclick: act(
                        () => call<GarmentView>('PATCH', `/gui/api/garments/${garment.id}`, { mainPhoto: n }),
                        'Try-ons now use that photo.',
                      ),
                    },
                    'Use for try-ons',
                  ),
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'button quiet small',
                      'aria-label': `Remove photo ${n + 1}`,
                      onclick: act(
                        () => call<GarmentView>('DELETE', `/gui/api/garments/${garment.id}/photos/${n}`),
                        'The photo is removed.',
                      ),
                    },
                    'Remove',
                  ),
                ),
          ),
        ),
      ),
      h('div', { class: 'actions' }, addPhotoButton, addPhotoInput),
    );
    addPhotoInput.onchange = async () => {
      const file = addPhotoInput.files?.[0];
      addPhotoInput.value = '';
      if (!file) return;
      await act(
        async () => call<GarmentView>('POST', `/gui/api/garments/${garment.id}/photos`, { image: await dataUrlOf(file) }),
        'The photo is added.',
      )();
    };
    photos.hidden = false;
  };

  const setSizes = (chosen: readonly string[]): void => {
    sizes.clear();
    for (const size of chosen) sizes.add(size);
    for (const chip of form.querySelectorAll<HTMLElement>('[data-size]'))
      chip.setAttribute('aria-pressed', String(sizes.has(chip.dataset.size!)));
  };
  const clearForm = (): void => {
    editing = null;
    form.reset();
    setSizes([]);
    preview.hidden = true;
    photo.required = true;
    formTitle.textContent = 'Add a garment';
    photoLabel.textContent = PHOTO_LABEL;
    photos.hidden = true;
    addButton.textContent = 'Add to the catalogue';
    cancelButton.hidden = true;
  };
  /** Loads a garment into the form to change it; its photo stays unless a new one is chosen. */
  const startEditing = (garment: GarmentView): void => {
    editing = garment;
    message.hidden = true;
    name.value = garment.name;
    category.value = garment.category;
    sku.value = garment.sku ?? '';
    barcode.value = garment.barcode ?? '';
    setSizes(garment.sizes);
    photo.value = '';
    photo.required = false;
    preview.src = garment.imageUrl;
    preview.hidden = false;
    formTitle.textContent = `Edit “${garment.name}”`;
    photoLabel.textContent = 'A new photo for try-ons (optional; it replaces the one they use)';
    showPhotos(garment);
    addButton.textContent = 'Save the changes';
    cancelButton.hidden = false;
    form.scrollIntoView({ block: 'start' });
    name.focus();
  };
  cancelButton.onclick = clearForm;
  const saveEdit = async (garment: GarmentView, file: File | undefined): Promise<void> => {
    addButton.disabled = true;
    try {
      const saved = await call<GarmentView>('PATCH', `/gui/api/garments/${garment.id}`, {
        name: name.value,
        category: category.value,
        sizes: [...sizes],
        sku: sku.value,
        barcode: barcode.value,
        ...(file ? { image: await dataUrlOf(file) } : {}),
      });
      garments = garments.map((other) => (other.id === saved.id ? saved : other));
      clearForm();
      draw();
      toast(`“${saved.name}” is saved.`);
    } catch (error) {
      message.textContent = plainWords(error);
      message.hidden = false;
    } finally {
      addButton.disabled = false;
    }
  };

  replace(
    root,
    h(
      'div',
      { class: 'catalogue-layout' },
      h('section', { class: 'panel', 'aria-labelledby': 'catalogue-title' }, h('h1', { id: 'catalogue-title' }, 'Catalogue'), search, list),
      form,
    ),
  );
  call<GarmentView[]>('GET', '/gui/api/garments')
    .then((loaded) => {
      garments = loaded;
      draw();
    })
    .catch((error: unknown) => replace(list, h('p', { class: 'error-box' }, plainWords(error))));
};
