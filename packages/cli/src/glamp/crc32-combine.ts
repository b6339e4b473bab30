/**
 * CRC-32 of a concatenation from the parts' CRCs (zlib's `crc32_combine`, which Node does not
 * expose): the blocks of a parallel gzip are checksummed on their threads and combined here in
 * order. Appending `n` bytes is a linear map on the 32-bit CRC, so it is a 32×32 matrix over
 * GF(2); the matrix for each length is built once (a stream has two lengths: the block size and
 * the last block's).
 */

const POLYNOMIAL = 0xedb88320;

function times(matrix: Uint32Array, vector: number): number {
  let sum = 0;
  for (let i = 0, v = vector >>> 0; v !== 0; i++, v >>>= 1) {
    if (v & 1) sum ^= matrix[i] as number;
  }
  return sum >>> 0;
}

function square(matrix: Uint32Array): Uint32Array {
  const result = new Uint32Array(32);
  for (let n = 0; n < 32; n++) result[n] = times(matrix, matrix[n] as number);
  return result;
}

function multiply(a: Uint32Array, b: Uint32Array): Uint32Array {
  // (a·b)·v = a·(b·v): column n of the product is a applied to column n of b.
  const result = new Uint32Array(32);
  for (let n = 0; n < 32; n++) result[n] = times(a, b[n] as number);
  return result;
}

/** The operator that appends `length` zero bytes to a CRC's register. */
function zeroBytesOperator(length: number): Uint32Array {
  // One zero bit: shift right, folding the polynomial in when the low bit falls out.
  let power: Uint32Array = new Uint32Array(32);
  power[0] = POLYNOMIAL;
  for (let n = 1; n < 32; n++) power[n] = (1 << (n - 1)) >>> 0;
  for (let i = 0; i < 3; i++) power = square(power); // one zero byte: 8 bits
  let result: Uint32Array | undefined;
  for (let n = length; n > 0; n = Math.floor(n / 2)) {
    if (n % 2 === 1) result = result ? multiply(power, result) : power;
    power = square(power);
  }
  return result ?? Uint32Array.from({ length: 32 }, (_, n) => (1 << n) >>> 0);
}

const operators = new Map<number, Uint32Array>();

/** The CRC-32 of `a + b`, given `crc32(a)`, `crc32(b)` and `b`'s length. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB === 0) return crcA >>> 0;
  let operator = operators.get(lengthB);
  if (!operator) {
    operator = zeroBytesOperator(lengthB);
    if (operators.size < 64) operators.set(lengthB, operator);
  }
  return (times(operator, crcA) ^ crcB) >>> 0;
}
