package resumable

// CombineCRC32C returns the CRC-32C of the concatenation A‖B from crcA, the
// CRC-32C of A, and crcB, the CRC-32C of B, whose length is lenB bytes. It
// reads no data: a sliced download checks the whole object from its slices'
// checksums, and a composite upload predicts the checksum GCS gives the
// composed object from its components'.
//
// This is zlib's crc32_combine for the Castagnoli polynomial: appending lenB
// bytes multiplies A's CRC register by x^(8·lenB) modulo the polynomial, in
// the bit-reflected representation, and the pre- and post-conditioning of the
// two CRCs cancel out.
func CombineCRC32C(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	return mulModP(xPow2N(uint64(lenB), 3), crcA) ^ crcB
}

// castagnoliReflected is the CRC-32C polynomial, bit-reversed.
const castagnoliReflected = 0x82f63b78

// mulModP multiplies a and b modulo the polynomial, both bit-reflected
// (x^0 is the top bit).
func mulModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReflected
		} else {
			b >>= 1
		}
	}
	return p
}

// x2k[k] is x^(2^k) modulo the polynomial; x2k[0] is x itself.
var x2k = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1, reflected
	for k := range t {
		t[k] = p
		p = mulModP(p, p)
	}
	return t
}()

// xPow2N returns x^(n·2^k) modulo the polynomial. The powers cycle with a
// period that divides 2^32-1, so k is taken modulo 32.
func xPow2N(n uint64, k uint) uint32 {
	p := uint32(1) << 31 // x^0
	for ; n != 0; n >>= 1 {
		if n&1 != 0 {
			p = mulModP(x2k[k&31], p)
		}
		k++
	}
	return p
}
