/**
 * One contract, two image stores: every test here runs against files in a directory (a temporary one) and
 * PostgreSQL (a throwaway cluster, one database per test). Real photo bytes round trip with their size and format,
 * a put replaces, removing a try-on's images removes all of them and no other's, a missing image is a named error,
 * concurrent puts all land, a large image round trips, and no name, id or file can reach outside a try-on's images.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../server/kernel/ids.ts';
import { DirectoryImageStore, ImageKeyError, ImageNotFoundError, type ImageStore } from '../../server/state/images.ts';
import { PgDatabase } from '../../server/state/postgres/db.ts';
import { PgImageStore } from '../../server/state/postgres/images.ts';
import type { StoredImage } from '../../server/store/schema.ts';
import { fixturePhoto as photo } from '../helpers/hostile-images.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { tempDir } from '../helpers/temp-dir.ts';

interface Adapter {
  name: string;
  skip: string | false;
  open(): Promise<ImageStore>;
  /** Where a stored image's bytes end up, for checks beyond the contract. */
  inspect: {
    /** How many images of `genId` the store still holds. */
    count(genId: string): Promise<number>;
    /** Every file or row name the store holds, for "nothing landed anywhere else". */
    everything(): Promise<string[]>;
  };
}

const postgres = clusterForFile('images');
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
  return out;
}

const adapters: Adapter[] = [
  {
    name: 'directory',
    skip: false,
    async open() {
      // The store's root sits one level down, so that a path that escaped it would land in a folder we can see.
      root = join(await tempDir('fr-images-'), 'root');
      return new DirectoryImageStore(root);
    },
    inspect: {
      async count(genId) {
        const dir = join(root, 'images', genId);
        return existsSync(dir) ? (await readdir(dir)).length : 0;
      },
      async everything() {
        return filesUnder(join(root, '..'));
      },
    },
  },
  {
    name: 'postgres',
    skip: postgres.skip,
    async open() {
      db = await PgDatabase.open(await postgres.newDatabase());
      dbs.push(db);
      return new PgImageStore(db);
    },
    inspect: {
      async count(genId) {
        const { rows } = await db!.query<{ n: number }>('SELECT count(*)::int AS n FROM images WHERE gen_id = $1', [genId]);
        return rows[0]!.n;
      },
      async everything() {
        const { rows } = await db!.query<{ key: string }>(`SELECT gen_id || '/' || name AS key FROM images ORDER BY 1`);
        return rows.map((row) => row.key);
      },
    },
  },
];

const HOSTILE_NAMES = ['../x', '..', '.', '', 'a/b', 'a\\b', '../../etc/passwd', 'x\0', 'Selfie', '.hidden', 'x.jpg', 'a'.repeat(65), 7];
const HOSTILE_IDS = [
  '../x',
  '..',
  '',
  'gen_../../../tmp',
  `gen_${'A'.repeat(26)}/..`,
  `gen_${'a'.repeat(26)}`,
  `../gen_${'A'.repeat(26)}`,
  null,
];
const HOSTILE_FILES = [
  '../x.jpg',
  '/etc/passwd',
  'images/../../x.jpg',
  `images/gen_${'A'.repeat(26)}/../../../x.jpg`,
  `images/gen_${'A'.repeat(26)}/../../gen_${'B'.repeat(26)}/selfie.jpg`,
  `images/gen_${'A'.repeat(26)}/selfie.png`, // a format its extension does not match (the image says jpeg)
  `images/gen_${'A'.repeat(26)}/selfie.jpg/..`,
  `catalogue/x.jpg`,
];

for (const adapter of adapters) {
  describe(`image store contract: ${adapter.name}`, { skip: adapter.skip }, () => {
    let store: ImageStore;
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

    test('a real photo round trips byte for byte, with its format and size', async () => {
      await fresh();
      const genId = newId('gen');
      const stored = await store.put(genId, 'selfie', real.bytes, meta());
      assert.deepEqual(stored, { file: `images/${genId}/selfie.jpg`, format: 'jpeg', width: real.width, height: real.height });
      const back = await store.get(stored);
      assert.ok(Buffer.isBuffer(back));
      assert.equal(back.length, real.bytes.length);
      assert.ok(back.equals(real.bytes), 'the bytes differ');
      // A Uint8Array view into a larger buffer stores its own bytes only.
      const framed = new Uint8Array(real.bytes.length + 20);
      framed.set(real.bytes, 10);
      const png = await store.put(genId, 'item-0', framed.subarray(10, 10 + real.bytes.length), { format: 'png', width: 3, height: 4 });
      assert.deepEqual(png, { file: `images/${genId}/item-0.png`, format: 'png', width: 3, height: 4 });
      assert.ok((await store.get(png)).equals(real.bytes));
    });

    test('a put of a name already stored replaces it, so a retried put is harmless', async () => {
      await fresh();
      const genId = newId('gen');
      await store.put(genId, 'result', Buffer.from('first'), meta());
      const again = await store.put(genId, 'result', real.bytes, meta());
      assert.ok((await store.get(again)).equals(real.bytes));
      assert.equal(await adapter.inspect.count(genId), 1);
    });

    test("removing a try-on's images removes all of them and no other try-on's", async () => {
      await fresh();
      const [a, b] = [newId('gen'), newId('gen')];
      const ofA = [
        await store.put(a, 'selfie', real.bytes, meta()),
        await store.put(a, 'item-0', real.bytes, meta()),
        await store.put(a, 'result', real.bytes, meta()),
      ];
      const ofB = await store.put(b, 'selfie', real.bytes, meta());
      assert.equal(await adapter.inspect.count(a), 3);
      await store.removeGeneration(a);
      assert.equal(await adapter.inspect.count(a), 0, 'every image of the try-on is gone from the store itself');
      for (const image of ofA) await assert.rejects(store.get(image), ImageNotFoundError);
      assert.ok((await store.get(ofB)).equals(real.bytes));
      assert.equal(await adapter.inspect.count(b), 1);
      await store.removeGeneration(a);
      await store.removeGeneration(newId('gen'));
    });

    test('one image can be removed alone', async () => {
      await fresh();
      const genId = newId('gen');
      const selfie = await store.put(genId, 'selfie', real.bytes, meta());
      const result = await store.put(genId, 'result', real.bytes, meta());
      await store.remove(selfie);
      await store.remove(selfie);
      await assert.rejects(store.get(selfie), ImageNotFoundError);
      assert.ok((await store.get(result)).equals(real.bytes));
    });

    test('an image the store does not hold is a named error', async () => {
      await fresh();
      const genId = newId('gen');
      const never: StoredImage = { file: `images/${genId}/result.jpg`, format: 'jpeg', width: 1, height: 1 };
      await assert.rejects(store.get(never), (error: unknown) => {
        assert.ok(error instanceof ImageNotFoundError);
        assert.equal(error.file, never.file);
        assert.match(error.message, new RegExp(`${genId}/result\\.jpg is not in the image store`));
        return true;
      });
      // Stored as a JPEG: the same name as a PNG is another image.
      await store.put(genId, 'result', real.bytes, meta());
      await assert.rejects(store.get({ ...never, file: `images/${genId}/result.png`, format: 'png' }), ImageNotFoundError);
    });

    test('concurrent puts of different try-ons all land, each with its own bytes', async () => {
      await fresh();
      const ids = Array.from({ length: 8 }, () => newId('gen'));
      const bytesOf = (i: number, name: string) => Buffer.concat([real.bytes, Buffer.from(`${i}:${name}`)]);
      const stored = await Promise.all(
        ids.flatMap((genId, i) => ['selfie', 'item-0', 'result'].map((name) => store.put(genId, name, bytesOf(i, name), meta()))),
      );
      assert.equal(stored.length, 24);
      const back = await Promise.all(stored.map((image) => store.get(image)));
      for (const [k, bytes] of back.entries()) {
        const i = Math.floor(k / 3);
        const name = ['selfie', 'item-0', 'result'][k % 3]!;
        assert.ok(bytes.equals(bytesOf(i, name)), `${ids[i]} ${name}`);
      }
      for (const genId of ids) assert.equal(await adapter.inspect.count(genId), 3);
    });

    test('a large image (16 MiB) round trips', async () => {
      await fresh();
      const genId = newId('gen');
      const large = Buffer.alloc(16 * 1024 * 1024);
      for (let i = 0; i < large.length; i += 4) large.writeUInt32LE((Math.imul(i, 2654435761) ^ (i >>> 7)) >>> 0, i);
      const stored = await store.put(genId, 'selfie', large, { format: 'png', width: 4000, height: 5000 });
      assert.ok((await store.get(stored)).equals(large));
    });

    test("no id, name or file can reach outside a try-on's own images", async () => {
      await fresh();
      const genId = newId('gen');
      const kept = await store.put(genId, 'selfie', real.bytes, meta());
      for (const name of HOSTILE_NAMES)
        await assert.rejects(store.put(genId, name as string, real.bytes, meta()), ImageKeyError, `name ${JSON.stringify(name)}`);
      for (const id of HOSTILE_IDS) {
        await assert.rejects(store.put(id as string, 'selfie', real.bytes, meta()), ImageKeyError, `id ${JSON.stringify(id)}`);
        await assert.rejects(store.removeGeneration(id as string), ImageKeyError, `id ${JSON.stringify(id)}`);
      }
      for (const file of HOSTILE_FILES) {
        const image: StoredImage = { file, format: 'jpeg', width: 1, height: 1 };
        await assert.rejects(store.get(image), ImageKeyError, file);
        await assert.rejects(store.remove(image), ImageKeyError, file);
      }
      const formats = ['../x', 'jpg', 'gif'];
      for (const format of formats)
        await assert.rejects(store.put(genId, 'x', real.bytes, { format: format as 'jpeg', width: 1, height: 1 }), ImageKeyError, format);
      for (const side of [0, -1, 1.5, Number.NaN])
        await assert.rejects(store.put(genId, 'x', real.bytes, { format: 'jpeg', width: side, height: 1 }), ImageKeyError);
      assert.deepEqual(await adapter.inspect.everything(), [
        adapter.name === 'directory' ? `root/images/${genId}/selfie.jpg` : `${genId}/selfie`,
      ]);
      assert.ok((await store.get(kept)).equals(real.bytes));
    });

    if (adapter.name === 'postgres') {
      test('the table itself refuses what the code refuses, and keeps the size beside the bytes', async () => {
        await fresh();
        const genId = newId('gen');
        await store.put(genId, 'selfie', real.bytes, meta());
        const { rows } = await db!.query<{ byte_size: number; format: string; width: number; height: number; created_at: Date }>(
          'SELECT byte_size, format, width, height, created_at FROM images WHERE gen_id = $1',
          [genId],
        );
        assert.equal(rows.length, 1);
        assert.deepEqual(
          { ...rows[0]!, created_at: undefined },
          {
            byte_size: real.bytes.length,
            format: 'jpeg',
            width: real.width,
            height: real.height,
            created_at: undefined,
          },
        );
        assert.ok(rows[0]!.created_at instanceof Date);
        const insert = (id: string, name: string) =>
          db!.query(`INSERT INTO images (gen_id, name, format, width, height, bytes) VALUES ($1, $2, 'jpeg', 1, 1, '\\x00')`, [id, name]);
        await assert.rejects(insert(genId, '../x'), /images_plain_name/);
        await assert.rejects(insert('../x', 'selfie'), /images_generation_id/);
        await assert.rejects(insert(genId, 'a/b'), /images_plain_name/);
      });
    }
  });
}
