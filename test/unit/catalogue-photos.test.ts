/**
 * One contract, two stores of the catalogue's photos: every test here runs against files in a directory (a
 * temporary one) and PostgreSQL (a throwaway cluster, one database per test). Real photo bytes round trip under
 * the names the catalogue has always used, a put replaces, one photo is removed alone, a missing photo is a named
 * error, a photo `fittingroom migrate` moved in reads back, concurrent puts all land, and no id, version or file
 * can reach outside the catalogue's own photos.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../server/kernel/ids.ts';
import { DirectoryCataloguePhotos, type CataloguePhotoStore } from '../../server/state/catalogue-photos.ts';
import { ImageKeyError, ImageNotFoundError } from '../../server/state/images.ts';
import { PgCataloguePhotos } from '../../server/state/postgres/catalogue-photos.ts';
import { PgDatabase } from '../../server/state/postgres/db.ts';
import type { StoredImage } from '../../server/store/schema.ts';
import { fixturePhoto as photo } from '../helpers/hostile-images.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { tempDir } from '../helpers/temp-dir.ts';

interface Adapter {
  name: string;
  skip: string | false;
  open(): Promise<CataloguePhotoStore>;
  /** Where a photo's bytes end up, for checks beyond the contract. */
  inspect: {
    /** Every file or row the store holds, for "nothing landed anywhere else". */
    everything(): Promise<string[]>;
    /** Puts a photo where `fittingroom migrate` (server/state/migrate-shop.ts) puts a moved shop's photo. */
    migrated(photo: StoredImage, bytes: Buffer): Promise<void>;
  };
}

const postgres = clusterForFile('catalogue_photos');
let db: PgDatabase | null = null;
const dbs: PgDatabase[] = [];
let root = '';

async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await filesUnder(join(dir, entry.name), path)));
    else out.push(path);
  }
  return out.sort();
}

const adapters: Adapter[] = [
  {
    name: 'directory',
    skip: false,
    async open() {
      // The store's root sits one level down, so that a path that escaped it would land in a folder we can see.
      root = join(await tempDir('fr-catalogue-'), 'root');
      return new DirectoryCataloguePhotos(root);
    },
    inspect: {
      everything: () => filesUnder(join(root, '..')),
      async migrated(photo, bytes) {
        await mkdir(join(root, 'catalogue'), { recursive: true });
        await writeFile(join(root, photo.file), bytes);
      },
    },
  },
  {
    name: 'postgres',
    skip: postgres.skip,
    async open() {
      db = await PgDatabase.open(await postgres.newDatabase());
      dbs.push(db);
      return new PgCataloguePhotos(db);
    },
    inspect: {
      async everything() {
        const { rows } = await db!.query<{ file: string }>('SELECT file FROM catalogue_photos ORDER BY 1');
        return rows.map((row) => row.file);
      },
      async migrated(photo, bytes) {
        await db!.query('INSERT INTO catalogue_photos (file, format, width, height, bytes) VALUES ($1, $2, $3, $4, $5)', [
          photo.file,
          photo.format,
          photo.width,
          photo.height,
          bytes,
        ]);
      },
    },
  },
];

const A = 'A'.repeat(26);
const HOSTILE_IDS = [
  '../x',
  '..',
  '',
  'gar_../../../tmp',
  `gar_${A}/..`,
  `gar_${'a'.repeat(26)}`,
  `../gar_${A}`,
  `gen_${A}`,
  `gar_${A}.jpg`,
  `gar_${A}\0`,
  null,
  7,
];
const HOSTILE_VERSIONS = ['', '../1', '1/2', '1\\2', 'abc', '1'.repeat(21), '-1', '1.5', ' 1', 12, null];
const HOSTILE_FILES = [
  '../x.jpg',
  '/etc/passwd',
  'state.json',
  'catalogue/../state.json',
  'catalogue\\..\\state.json',
  `catalogue/gar_${A}/../../x.jpg`,
  `catalogue/../catalogue/gar_${A}.jpg`,
  `/catalogue/gar_${A}.jpg`,
  `catalogue/gar_${A}.png`, // a format its extension does not match (the photo says jpeg)
  `catalogue/gar_${A}.jpg/..`,
  `catalogue/gar_${A}-.jpg`,
  `catalogue/gar_${A}.jpg\0`,
  `catalogue/gar_${A}`,
  `images/gen_${A}/selfie.jpg`,
];

for (const adapter of adapters) {
  describe(`catalogue photo store contract: ${adapter.name}`, { skip: adapter.skip }, () => {
    let store: CataloguePhotoStore;
    let real: { bytes: Buffer; width: number; height: number };
    before(async () => {
      real = await photo();
    });
    after(() => Promise.all(dbs.map((each) => each.close())));
    const fresh = async () => {
      store = await adapter.open();
      return store;
    };
    const meta = () => ({ format: 'jpeg' as const, width: real.width, height: real.height });

    test('a real photo round trips byte for byte, under the name the catalogue has always given it', async () => {
      await fresh();
      const id = newId('gar');
      const stored = await store.put(id, real.bytes, meta());
      assert.deepEqual(stored, { file: `catalogue/${id}.jpg`, format: 'jpeg', width: real.width, height: real.height });
      const back = await store.get(stored);
      assert.ok(Buffer.isBuffer(back));
      assert.ok(back.equals(real.bytes), 'the bytes differ');
      // A new version of the photo is another file; a Uint8Array view into a larger buffer stores its own bytes only.
      const framed = new Uint8Array(real.bytes.length + 20);
      framed.set(real.bytes, 10);
      const version = String(Date.now());
      const png = await store.put(id, framed.subarray(10, 10 + real.bytes.length), { format: 'png', width: 3, height: 4 }, version);
      assert.deepEqual(png, { file: `catalogue/${id}-${version}.png`, format: 'png', width: 3, height: 4 });
      assert.ok((await store.get(png)).equals(real.bytes));
      assert.ok((await store.get(stored)).equals(real.bytes), 'the first version stays');
      assert.equal((await adapter.inspect.everything()).length, 2);
    });

    test('a put of a file already stored replaces it, so a retried put is harmless', async () => {
      await fresh();
      const id = newId('gar');
      await store.put(id, Buffer.from('first'), meta(), '1');
      const again = await store.put(id, real.bytes, meta(), '1');
      assert.ok((await store.get(again)).equals(real.bytes));
      assert.equal((await adapter.inspect.everything()).length, 1);
    });

    test('one photo is removed alone, and removing it again is fine', async () => {
      await fresh();
      const id = newId('gar');
      const first = await store.put(id, real.bytes, meta());
      const second = await store.put(id, real.bytes, meta(), '2');
      const other = await store.put(newId('gar'), real.bytes, meta());
      await store.remove(first);
      await store.remove(first);
      await assert.rejects(store.get(first), ImageNotFoundError);
      assert.ok((await store.get(second)).equals(real.bytes));
      assert.ok((await store.get(other)).equals(real.bytes));
      assert.equal((await adapter.inspect.everything()).length, 2);
    });

    test('a photo the store does not hold is a named error', async () => {
      await fresh();
      const id = newId('gar');
      const never: StoredImage = { file: `catalogue/${id}.jpg`, format: 'jpeg', width: 1, height: 1 };
      await assert.rejects(store.get(never), (error: unknown) => {
        assert.ok(error instanceof ImageNotFoundError);
        assert.equal(error.file, never.file);
        assert.match(error.message, new RegExp(`catalogue/${id}\\.jpg is not in`));
        return true;
      });
      await store.remove(never);
      // Stored as a JPEG: the same garment's PNG is another photo.
      await store.put(id, real.bytes, meta());
      await assert.rejects(store.get({ ...never, file: `catalogue/${id}.png`, format: 'png' }), ImageNotFoundError);
    });

    test('a photo that `fittingroom migrate` moved in reads back and can be removed', async () => {
      await fresh();
      const moved: StoredImage = { file: `catalogue/${newId('gar')}-1700000000000.webp`, format: 'webp', width: 5, height: 6 };
      await adapter.inspect.migrated(moved, real.bytes);
      assert.ok((await store.get(moved)).equals(real.bytes));
      await store.remove(moved);
      await assert.rejects(store.get(moved), ImageNotFoundError);
    });

    test('concurrent puts of different garments all land, each with its own bytes', async () => {
      await fresh();
      const ids = Array.from({ length: 8 }, () => newId('gar'));
      const bytesOf = (i: number, v: string) => Buffer.concat([real.bytes, Buffer.from(`${i}:${v}`)]);
      const stored = await Promise.all(ids.flatMap((id, i) => ['1', '2', '3'].map((v) => store.put(id, bytesOf(i, v), meta(), v))));
      const back = await Promise.all(stored.map((image) => store.get(image)));
      for (const [k, bytes] of back.entries()) assert.ok(bytes.equals(bytesOf(Math.floor(k / 3), String((k % 3) + 1))), String(k));
      assert.equal((await adapter.inspect.everything()).length, 24);
    });

    test("no garment id, version or file can reach outside the catalogue's own photos", async () => {
      await fresh();
      const id = newId('gar');
      const kept = await store.put(id, real.bytes, meta());
      for (const hostile of HOSTILE_IDS)
        await assert.rejects(store.put(hostile as string, real.bytes, meta()), ImageKeyError, `id ${JSON.stringify(hostile)}`);
      for (const version of HOSTILE_VERSIONS)
        await assert.rejects(store.put(id, real.bytes, meta(), version as string), ImageKeyError, `version ${JSON.stringify(version)}`);
      for (const file of HOSTILE_FILES) {
        const image: StoredImage = { file, format: 'jpeg', width: 1, height: 1 };
        await assert.rejects(store.get(image), ImageKeyError, file);
        await assert.rejects(store.remove(image), ImageKeyError, file);
      }
      await assert.rejects(store.get({ file: 7, format: 'jpeg', width: 1, height: 1 } as unknown as StoredImage), ImageKeyError);
      for (const format of ['../x', 'jpg', 'gif'])
        await assert.rejects(store.put(id, real.bytes, { format: format as 'jpeg', width: 1, height: 1 }), ImageKeyError, format);
      for (const side of [0, -1, 1.5, Number.NaN])
        await assert.rejects(store.put(id, real.bytes, { format: 'jpeg', width: side, height: 1 }), ImageKeyError);
      assert.deepEqual(await adapter.inspect.everything(), [
        adapter.name === 'directory' ? `root/catalogue/${id}.jpg` : `catalogue/${id}.jpg`,
      ]);
      assert.ok((await store.get(kept)).equals(real.bytes));
    });

    if (adapter.name === 'postgres') {
      test('the table itself refuses a file the code refuses', async () => {
        await fresh();
        const insert = (file: string) =>
          db!.query(`INSERT INTO catalogue_photos (file, format, width, height, bytes) VALUES ($1, 'jpeg', 1, 1, '\\x00')`, [file]);
        for (const file of ['../x.jpg', 'catalogue/../state.json', `catalogue/gar_${A}/../../x.jpg`, `images/gen_${A}/selfie.jpg`])
          await assert.rejects(insert(file), /catalogue_photos_plain_file/, file);
      });
    }
  });
}
