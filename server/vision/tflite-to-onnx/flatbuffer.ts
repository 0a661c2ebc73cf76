/**
 * A read-only FlatBuffers accessor over a DataView: just enough to walk the
 * TFLite schema (tables, scalars, vectors, strings). Positions are absolute
 * byte offsets into the buffer; 0 means "absent".
 */
export class FlatBufferReader {
  readonly bytes: Uint8Array;
  private readonly view: DataView;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** The root table of the buffer. */
  root(): number {
    return this.view.getUint32(0, true);
  }

  /** The four-byte file identifier (e.g. `TFL3`). */
  identifier(): string {
    return String.fromCharCode(...this.bytes.subarray(4, 8));
  }

  /** Absolute position of field `index` of `table`, or 0 when absent. */
  field(table: number, index: number): number {
    const vtable = table - this.view.getInt32(table, true);
    const vtableSize = this.view.getUint16(vtable, true);
    const entry = 4 + 2 * index;
    if (entry >= vtableSize) return 0;
    const offset = this.view.getUint16(vtable + entry, true);
    return offset ? table + offset : 0;
  }

  private deref(position: number): number {
    return position + this.view.getUint32(position, true);
  }

  /** A sub-table, or 0 when absent. */
  table(table: number, index: number): number {
    const p = this.field(table, index);
    return p ? this.deref(p) : 0;
  }

  /** A vector's length and the position of its first element, or null. */
  vector(table: number, index: number): { length: number; start: number } | null {
    const p = this.field(table, index);
    if (!p) return null;
    const v = this.deref(p);
    return { length: this.view.getUint32(v, true), start: v + 4 };
  }

  /** A vector of tables. */
  tables(table: number, index: number): number[] {
    const v = this.vector(table, index);
    if (!v) return [];
    return Array.from({ length: v.length }, (_, k) => this.deref(v.start + 4 * k));
  }

  /** A vector of int32. */
  int32s(table: number, index: number): number[] {
    const v = this.vector(table, index);
    if (!v) return [];
    return Array.from({ length: v.length }, (_, k) => this.view.getInt32(v.start + 4 * k, true));
  }

  /** A vector of unsigned integers of 1, 2 or 4 bytes (the TFLite index-vector union). */
  unsigneds(table: number, index: number, width: 1 | 2 | 4): number[] {
    const v = this.vector(table, index);
    if (!v) return [];
    return Array.from({ length: v.length }, (_, k) => {
      const p = v.start + width * k;
      return width === 1 ? this.view.getUint8(p) : width === 2 ? this.view.getUint16(p, true) : this.view.getInt32(p, true);
    });
  }

  /** A vector of bytes (a view into the buffer, not a copy), or null. */
  byteVector(table: number, index: number): Uint8Array | null {
    const v = this.vector(table, index);
    return v ? this.bytes.subarray(v.start, v.start + v.length) : null;
  }

  /** A UTF-8 string, or null. */
  string(table: number, index: number): string | null {
    const b = this.byteVector(table, index);
    return b ? new TextDecoder().decode(b) : null;
  }

  int8(table: number, index: number, fallback = 0): number {
    const p = this.field(table, index);
    return p ? this.view.getInt8(p) : fallback;
  }

  uint8(table: number, index: number, fallback = 0): number {
    const p = this.field(table, index);
    return p ? this.view.getUint8(p) : fallback;
  }

  int32(table: number, index: number, fallback = 0): number {
    const p = this.field(table, index);
    return p ? this.view.getInt32(p, true) : fallback;
  }

  uint32(table: number, index: number, fallback = 0): number {
    const p = this.field(table, index);
    return p ? this.view.getUint32(p, true) : fallback;
  }

  bool(table: number, index: number): boolean {
    return this.uint8(table, index) !== 0;
  }
}
