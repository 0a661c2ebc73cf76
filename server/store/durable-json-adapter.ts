/**
 * A lowdb adapter that writes the whole document atomically and durably.
 * lowdb's own TextFile adapter renames without fsync, so a power cut can
 * leave an empty or old file; this one fsyncs the data and the directory.
 */
import { readFile } from 'node:fs/promises';
import type { Adapter } from 'lowdb';
import { writeFileDurably } from '../kernel/durable-fs.ts';

export class DurableJsonFile<T> implements Adapter<T> {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return JSON.parse(text) as T;
  }

  /** Serializes synchronously, so later in-memory changes never leak into this write. */
  write(data: T): Promise<void> {
    const text = JSON.stringify(data);
    return writeFileDurably(this.path, text);
  }
}
