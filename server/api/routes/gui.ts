/**
 * The GUI's private routes (`/gui/api/…`, not part of the v1 contract):
 * sign-in and sign-out, the staff PIN, the appliance's retention settings,
 * the garment catalogue and the camera's framing advice. The GUI calls everything else through /api/v1 with
 * its session (see server/api/middleware/api-key.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../kernel/errors.ts';
import { apiKey, requireScope } from '../middleware/api-key.ts';
import { jsonBody } from '../middleware/json-body.ts';
import { authOf, viewerOf } from '../request-context.ts';
import { reachableBaseUrl } from '../middleware/host-check.ts';
import { newShareLink, qrSvg } from '../../gui/share.ts';
import { contentType } from '../../images/files.ts';
import type { AppDeps } from '../deps.ts';
import { jpegFrameBody } from '../../gui/framing.ts';
import {
  MAX_PHOTOS,
  applyGarmentChanges,
  checkGarment,
  checkGarmentChanges,
  checkGarmentPhoto,
  findGarment,
  garmentView,
  newGarmentId,
  removeGarmentPhotos,
} from '../../gui/catalogue.ts';
import { photosOf, type CatalogueGarment } from '../../store/schema.ts';
import {
  checkPinShape,
  clearSessionCookie,
  csrfTokenFor,
  findSession,
  guiSessionAuth,
  hashPin,
  PinThrottle,
  sessionTokenOf,
  setSessionCookie,
  signIn,
  verifyPin,
} from '../../gui/session.ts';
import type { GuiChoices, GuiSettings, SessionInfo } from '../../gui/contract.ts';
import { isOneOf } from '../../kernel/vocabulary.ts';
import { activeKeyFor } from '../../state/accounts.ts';

/** Refuses a sign-in posted from another site (a login CSRF). */
function checkSameSite(req: Request): void {
  const site = req.get('sec-fetch-site');
  const origin = req.get('origin');
  if (site === 'cross-site' || site === 'same-site' || (origin && origin !== `${req.protocol}://${req.get('host') ?? ''}`)) {
    throw new ApiError('forbidden', 'Sign in from the appliance’s own page.');
  }
}

function launchTokenMatches(expected: string | null | undefined, given: unknown): boolean {
  if (!expected || typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** The shop's choices PUT /gui/api/settings takes. */
const CHOICES = ['eraseOnNewCustomer', 'autoCapture'] as const satisfies readonly (keyof GuiChoices)[];

/** The router mounted at /gui/api. */
export function guiRoutes(deps: AppDeps): Router {
  const { accounts, cataloguePhotos: photos, clock, config, tryOns } = deps;
  const sessions = guiSessionAuth(accounts);
  const keys = { activeKey: (secret: string) => activeKeyFor(accounts, secret, clock()), clock, sessions };
  const launchToken = deps.guiLaunchToken ?? null;
  const throttle = new PinThrottle(accounts);
  const body = jsonBody({ limitBytes: config.bodyLimitBytes });
  const router = Router();

  router.get('/session', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const token = sessionTokenOf(req);
    const found = token ? await findSession(accounts, token, clock()) : undefined;
    const common = { pinSet: (await accounts.shopFloor()).pinHash !== null, shell: launchToken !== null, version: deps.version };
    if (!token || !found) {
      res.json({ signedIn: false, ...common } satisfies SessionInfo);
      return;
    }
    const info: SessionInfo = {
      signedIn: true,
      ...common,
      via: found.session.via,
      keyId: found.key.id,
      keyName: found.key.name,
      expiresAt: found.session.expiresAt,
      csrfToken: csrfTokenFor(token),
    };
    res.json(info);
  });

  router.post('/session', body, async (req: Request, res: Response) => {
    checkSameSite(req);
    const fields = (req.body ?? {}) as Record<string, unknown>;
    const now = clock();
    // null: the GUI's own key (PIN and shell sign-ins), made by the store when missing.
    let keyId: string | null;
    let newPinHash: string | undefined;
    const via = fields.method;
    if (via === 'key') {
      const key = typeof fields.key === 'string' ? await activeKeyFor(accounts, fields.key.trim(), now) : undefined;
      if (!key) throw new ApiError('unauthorized', 'That admin key is unknown, revoked or expired.');
      if (key.scope !== 'admin') throw new ApiError('forbidden', 'Staff sign in with an admin key; this one is a standard key.');
      if (fields.newPin !== undefined) newPinHash = await hashPin(checkPinShape(fields.newPin));
      // Staff locked out of the PIN by someone guessing sign in with the key, which lifts the wait.
      await throttle.succeed();
      keyId = key.id;
    } else if (via === 'pin') {
      const pinHash = (await accounts.shopFloor()).pinHash;
      if (pinHash === null) throw new ApiError('conflict', 'No PIN is set yet: sign in with the admin key and choose one.');
      // The try is counted before the slow hash, and released only once a failure is written.
      const release = await throttle.begin(now);
      try {
        if (typeof fields.pin !== 'string' || !(await verifyPin(fields.pin, pinHash))) {
          await throttle.fail(now);
          throw new ApiError('unauthorized', 'That PIN is not right.');
        }
        await throttle.succeed();
      } finally {
        release();
      }
      keyId = null;
    } else if (via === 'shell') {
      if (!launchTokenMatches(launchToken, fields.token)) throw new ApiError('unauthorized', 'The app’s sign-in token is not valid.');
      keyId = null;
    } else {
      throw new ApiError('validation_failed', 'method: must be "key", "pin" or "shell"', {
        errors: [{ field: 'method', message: 'must be "key", "pin" or "shell"' }],
      });
    }
    const token = await signIn(accounts, { via, keyId, ...(newPinHash === undefined ? {} : { newPinHash }) }, now);
    setSessionCookie(res, token);
    res.setHeader('Cache-Control', 'no-store');
    res.json({ signedIn: true, via, csrfToken: csrfTokenFor(token) });
  });

  // Before the JSON body parser: the frame is a small JPEG, not JSON.
  router.post(
    '/framing',
    apiKey(keys),
    requireScope('admin', { shopFloor: true }),
    ...jpegFrameBody(),
    async (req: Request, res: Response) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json(await deps.framing.advise(Buffer.isBuffer(req.body) ? req.body : new Uint8Array()));
    },
  );

  // Everything below needs a session (with its CSRF token on changes) or an admin key.
  // Staff signed in with the PIN may do the shop floor's work here; changing the PIN or the settings is the admin's.
  router.use(apiKey(keys), requireScope('admin', { shopFloor: true }), ...body);

  router.delete('/session', async (req, res) => {
    const sessionId = authOf(req).sessionId;
    if (sessionId) await accounts.endSession(sessionId);
    clearSessionCookie(res);
    res.status(204).end();
  });

  router.put('/pin', requireScope('admin'), async (req, res) => {
    const pin = checkPinShape(((req.body ?? {}) as Record<string, unknown>).pin);
    const hash = await hashPin(pin);
    await accounts.setPin(hash);
    res.status(204).end();
  });

  router.get('/settings', async (req, res) => {
    const shop = await accounts.shopFloor();
    const settings: GuiSettings = {
      version: deps.version,
      retentionDays: config.imageRetentionDays,
      eraseInputsWhenDone: config.eraseInputsWhenDone,
      pinSet: shop.pinHash !== null,
      sessionKeyId: authOf(req).key.id,
      guiKeyId: shop.guiKeyId,
      eraseOnNewCustomer: shop.eraseOnNewCustomer,
      autoCapture: shop.autoCapture,
    };
    res.json(settings);
  });

  // The shop's choices for the shop floor: each field given is set, all checked before any is.
  router.put('/settings', requireScope('admin'), async (req, res) => {
    const fields = (req.body ?? {}) as Record<string, unknown>;
    const choices: GuiChoices = {};
    const errors: { field: string; message: string }[] = [];
    for (const name of CHOICES) {
      if (fields[name] === undefined) continue;
      if (typeof fields[name] === 'boolean') choices[name] = fields[name];
      else errors.push({ field: name, message: 'must be true or false' });
    }
    for (const name of Object.keys(fields)) if (!isOneOf(name, CHOICES)) errors.push({ field: name, message: 'is not a setting' });
    if (errors.length === 0 && Object.keys(choices).length === 0)
      errors.push({ field: CHOICES.join(' or '), message: 'give at least one setting' });
    if (errors.length > 0) throw new ApiError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
    await accounts.setChoices(choices);
    res.status(204).end();
  });

  // Taking the picture home: a short-lived link for the customer's phone, and its QR code.
  router.post('/try-on/:genId/share', async (req, res) => {
    const record = await tryOns.find(req.params.genId!, viewerOf(req));
    if (record.status !== 'complete' || !record.result)
      throw new ApiError('conflict', `The try-on ${record.id} has no picture to take home.`);
    const now = clock();
    const link = newShareLink(record.id, record.expiresAt, now);
    const share = await accounts.createShare(record.id, link.hash, link.expiresAt, now);
    const url = `${reachableBaseUrl(req.protocol, req.get('host'), config.publicBaseUrl)}/take/${link.token}`;
    // Bound to this PC's loopback only (the default), no phone can open the link: say so, and how to change it.
    const reachable = config.publicBaseUrl !== null || !['127.0.0.1', '::1', 'localhost'].includes(config.host);
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ url, expiresAt: share.expiresAt, qrSvg: qrSvg(url), reachable });
  });

  router.get('/garments', async (_req, res) => {
    res.json((await accounts.garments()).map(garmentView));
  });

  router.post('/garments', async (req, res) => {
    const checked = await checkGarment(req.body, config.imageLimits);
    const now = clock();
    const id = newGarmentId(now);
    const image = await photos.put(id, checked.image.normalized.bytes, checked.image.normalized);
    const garment: CatalogueGarment = {
      id,
      name: checked.name,
      category: checked.category,
      sizes: checked.sizes,
      ...(checked.sku ? { sku: checked.sku } : {}),
      ...(checked.barcode ? { barcode: checked.barcode } : {}),
      image,
      createdAt: now.toISOString(),
    };
    let added: CatalogueGarment;
    try {
      added = await accounts.addGarment(garment);
    } catch (error) {
      await photos.remove(image);
      throw error;
    }
    res.status(201).json(garmentView(added));
  });

  // Editing: any of name, category, sizes, SKU, barcode and a new photo; the old photo goes once the change is durable.
  router.patch('/garments/:id', async (req, res) => {
    const id = (await findGarment(accounts, req.params.id!)).id;
    const changes = await checkGarmentChanges(req.body, config.imageLimits);
    const prepared = changes.image?.normalized;
    const image = prepared && (await photos.put(id, prepared.bytes, prepared, String(clock().getTime())));
    let changed: { before: CatalogueGarment; after: CatalogueGarment };
    try {
      changed = await accounts.updateGarment(id, (garment) => applyGarmentChanges(garment, changes, image));
    } catch (error) {
      if (image) await photos.remove(image);
      throw error;
    }
    const replaced = image && changed.before.image;
    if (replaced && replaced.file !== image.file) await photos.remove(replaced);
    res.json(garmentView(changed.after));
  });

  router.get('/garments/:id/image', async (req, res) => {
    const garment = await findGarment(accounts, req.params.id!);
    const bytes = await photos.get(garment.image);
    res.setHeader('Cache-Control', 'private, max-age=3600');
    res.type(contentType(garment.image.format)).send(bytes);
  });

  router.delete('/garments/:id', async (req, res) => {
    const garment = await accounts.removeGarment(req.params.id!);
    await removeGarmentPhotos(photos, garment);
    res.status(204).end();
  });

  // More photos of a garment: added one at a time, served by number (0 is the one try-ons use), removed by number.
  router.post('/garments/:id/photos', async (req, res) => {
    const full = (garment: CatalogueGarment): boolean => photosOf(garment).length >= MAX_PHOTOS;
    const tooMany = (): ApiError => new ApiError('conflict', `A garment has at most ${MAX_PHOTOS} photos; remove one first.`);
    // Checked before the photo is prepared (the costly part), and again in the change itself.
    const current = await findGarment(accounts, req.params.id!);
    if (full(current)) throw tooMany();
    const id = current.id;
    const prepared = (await checkGarmentPhoto(req.body, config.imageLimits)).normalized;
    const photo = await photos.put(id, prepared.bytes, prepared, String(clock().getTime()));
    let updated: CatalogueGarment;
    try {
      ({ after: updated } = await accounts.updateGarment(id, (garment) => {
        if (full(garment)) throw tooMany();
        garment.morePhotos = [...(garment.morePhotos ?? []), photo];
      }));
    } catch (error) {
      await photos.remove(photo);
      throw error;
    }
    res.status(201).json(garmentView(updated));
  });

  router.get('/garments/:id/photos/:n/image', async (req, res) => {
    const photo = /^[0-9]$/.test(req.params.n!) ? photosOf(await findGarment(accounts, req.params.id!))[Number(req.params.n)] : undefined;
    if (!photo) throw new ApiError('not_found', `The garment has no photo ${req.params.n}.`);
    const bytes = await photos.get(photo);
    res.setHeader('Cache-Control', 'private, max-age=3600');
    res.type(contentType(photo.format)).send(bytes);
  });

  router.delete('/garments/:id/photos/:n', async (req, res) => {
    const n = Number(req.params.n);
    if (!/^[1-9]$/.test(req.params.n!))
      throw new ApiError('conflict', 'The photo try-ons use cannot be removed; make another one theirs first, or remove the garment.');
    const { before, after } = await accounts.updateGarment(req.params.id!, (garment) => {
      const more = garment.morePhotos ?? [];
      if (!more[n - 1]) throw new ApiError('not_found', `The garment has no photo ${n}.`);
      garment.morePhotos = more.filter((_, k) => k !== n - 1);
    });
    await photos.remove(before.morePhotos![n - 1]!);
    res.json(garmentView(after));
  });

  return router;
}
