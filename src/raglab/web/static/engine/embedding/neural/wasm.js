// A tiny WebAssembly emitter: the bytes of a module of i32/f32/v128 functions, no build step.
//
// Writes the binary format of the WebAssembly core specification (section 5, "Binary Format")
// and its fixed-width SIMD proposal (now part of the standard, opcodes after the 0xfd prefix):
// a module is the magic "\0asm", version 1, then numbered sections, each its id, its byte
// length (unsigned LEB128) and its contents. Only what kernel.js needs is here: one imported
// memory, functions of i32 parameters, their exports, and the opcodes listed in OP and SIMD.

/** Unsigned LEB128 of a non-negative integer: 7 bits a byte, low first, bit 7 set on all but
 * the last byte. */
export function unsigned(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer: as unsigned, two's complement, until the rest is the
 * sign extension of bit 6 of the last byte. */
export function signed(n) {
  const out = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** The value types' codes. */
export const I32 = 0x7f;
export const F32 = 0x7d;
export const V128 = 0x7b;

/** The one-byte opcodes used. */
export const OP = {
  block: 0x02, loop: 0x03, if: 0x04, end: 0x0b, br: 0x0c, brIf: 0x0d,
  localGet: 0x20, localSet: 0x21, localTee: 0x22,
  f32Load: 0x2a, f32Store: 0x38, i32Const: 0x41, f32Const: 0x43,
  i32Eqz: 0x45, i32LtS: 0x48, i32GtS: 0x4a, i32LeS: 0x4c, i32GeS: 0x4e,
  i32Add: 0x6a, i32Sub: 0x6b, i32Mul: 0x6c, i32And: 0x71, i32Shl: 0x74,
  f32Add: 0x92, f32Mul: 0x94,
};

/** The SIMD opcodes used (each written 0xfd, then the number as unsigned LEB128). */
export const SIMD = { load: 0x00, load32Splat: 0x09, store: 0x0b, f32x4Splat: 0x13, f32x4Add: 0xe4, f32x4Mul: 0xe6 };

/** The empty block type (a block or loop with no result). */
export const VOID = 0x40;

/** The bytes of a vector: its count, then the items' bytes. */
const vec = (items) => [...unsigned(items.length), ...items.flat()];

/** A name: its UTF-8 bytes as a vector. */
const name = (s) => vec([...new TextEncoder().encode(s)]);

const section = (id, bytes) => [id, ...unsigned(bytes.length), ...bytes];

/** A function body's code: `locals` the types of its locals after the parameters (in order),
 * `code` its instruction bytes (the final `end` added here). */
export function body(locals, code) {
  const groups = [];
  for (const type of locals) {
    const last = groups[groups.length - 1];
    if (last && last[1] === type) last[0] += 1;
    else groups.push([1, type]);
  }
  const bytes = [...vec(groups.map(([n, type]) => [...unsigned(n), type])), ...code, OP.end];
  return [...unsigned(bytes.length), ...bytes];
}

/** The bytes of a module that imports one memory (`memory.module`.`memory.name`, at least
 * `memory.pages` pages of 64 KiB) and exports `functions`: [{name, params: [types], body}],
 * each with no result. */
export function module({ memory, functions }) {
  const types = section(1, vec(functions.map((f) => [0x60, ...vec(f.params), ...vec([])])));
  const imports = section(2, vec([[...name(memory.module), ...name(memory.name), 0x02, 0x00, ...unsigned(memory.pages)]]));
  const declared = section(3, vec(functions.map((_, i) => unsigned(i))));
  const exported = section(7, vec(functions.map((f, i) => [...name(f.name), 0x00, ...unsigned(i)])));
  const code = section(10, vec(functions.map((f) => f.body)));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...declared, ...exported, ...code]);
}
