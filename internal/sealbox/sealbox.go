// Package sealbox seals small values with keys an operator gives every
// replica of the gateway: the session ids of 2025-11-25 clients, the
// request states the gateway issues, and OAuth tokens at rest in shared
// state. The keys come as MCPHOST_SESSION_KEYS holds them: comma-separated,
// each 32 random bytes in standard base64 (`openssl rand -base64 32`). The
// first key seals; every key opens, so a key is rotated by putting a new
// one first, and dropped once what it sealed has expired.
//
// A Box is AES-256-GCM under a key derived for one purpose (HKDF-SHA256,
// "mcphost <purpose>"), so one key never serves two purposes and a value
// sealed for one purpose does not open for another. A sealed value is
//
//	version (1 byte) ‖ key id (4 bytes) ‖ nonce (12 bytes) ‖ ciphertext+tag
//
// where the key id, the first bytes of SHA-256 of the derived key, picks
// the key that opens it without trying each.
package sealbox

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// EnvSessionKeys is the environment variable the gateway reads its keys
// from.
const EnvSessionKeys = "MCPHOST_SESSION_KEYS"

// KeySize is the size of one key.
const KeySize = 32

const (
	version = 1
	idLen   = 4
	// Overhead is what sealing adds to a value's length.
	Overhead = 1 + idLen + 12 + 16
)

// ErrOpen is the error of a value that does not open: not sealed by any of
// the keys for this purpose and context, damaged, or truncated.
var ErrOpen = errors.New("sealbox: the value does not open with any key")

// Keys are an operator's keys; the first seals. The zero Keys is not
// usable: use Parse or Random.
type Keys struct {
	raw [][KeySize]byte
}

// Parse reads keys as MCPHOST_SESSION_KEYS holds them. Spaces around a key
// are ignored; an empty entry, a key that is not standard base64 or not
// 32 bytes long is an error that names the entry by position, never its
// content.
func Parse(s string) (*Keys, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no key: expected comma-separated keys of 32 random bytes in standard base64 (openssl rand -base64 32)")
	}
	var k Keys
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		b, err := base64.StdEncoding.Strict().DecodeString(part)
		switch {
		case part == "":
			return nil, fmt.Errorf("key %d is empty: expected comma-separated keys of 32 random bytes in standard base64 (openssl rand -base64 32)", i+1)
		case err != nil:
			return nil, fmt.Errorf("key %d is not standard base64 (openssl rand -base64 32 makes one)", i+1)
		case len(b) != KeySize:
			return nil, fmt.Errorf("key %d is %d bytes long, not %d (openssl rand -base64 32 makes one)", i+1, len(b), KeySize)
		}
		k.raw = append(k.raw, [KeySize]byte(b))
	}
	return &k, nil
}

// Random returns one random key: what one gateway process uses when no keys
// are given. What it seals opens in that process only.
func Random() *Keys {
	var k [KeySize]byte
	rand.Read(k[:])
	return &Keys{raw: [][KeySize]byte{k}}
}

// Len returns the number of keys.
func (k *Keys) Len() int { return len(k.raw) }

// derive returns the key for purpose derived from each key, the sealing one
// first.
func (k *Keys) derive(purpose string) [][]byte {
	out := make([][]byte, len(k.raw))
	for i, raw := range k.raw {
		d, err := hkdf.Key(sha256.New, raw[:], nil, "mcphost "+purpose, KeySize)
		if err != nil {
			panic("sealbox: " + err.Error()) // (only for a length over 255*32)
		}
		out[i] = d
	}
	return out
}

// MACKeys returns a key for purpose derived from each key, the first
// signing and all verifying, for values that need integrity but no secrecy.
func (k *Keys) MACKeys(purpose string) [][]byte { return k.derive(purpose) }

// Box seals and opens values for one purpose. It is safe for concurrent
// use.
type Box struct {
	aeads []cipher.AEAD
	ids   [][idLen]byte
}

// Box returns the box for purpose.
func (k *Keys) Box(purpose string) *Box {
	b := &Box{}
	for _, d := range k.derive(purpose) {
		block, err := aes.NewCipher(d)
		if err != nil {
			panic("sealbox: " + err.Error()) // (a 32-byte key always makes one)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			panic("sealbox: " + err.Error())
		}
		sum := sha256.Sum256(d)
		b.aeads = append(b.aeads, aead)
		b.ids = append(b.ids, [idLen]byte(sum[:idLen]))
	}
	return b
}

// Seal seals plain with the first key, bound to aad (which Open must be
// given again), appending to dst.
func (b *Box) Seal(dst, plain, aad []byte) []byte {
	aead := b.aeads[0]
	dst = append(dst, version)
	dst = append(dst, b.ids[0][:]...)
	n := len(dst)
	dst = append(dst, make([]byte, aead.NonceSize())...)
	rand.Read(dst[n:])
	return aead.Seal(dst, dst[n:n+aead.NonceSize()], plain, aad)
}

// SealedByFirst reports whether sealed names the first key (the one Seal
// uses): a value kept longer than a key is used, and opened with another
// key, is to be sealed again before that key is dropped.
func (b *Box) SealedByFirst(sealed []byte) bool {
	return len(sealed) >= Overhead && sealed[0] == version && bytes.Equal(sealed[1:1+idLen], b.ids[0][:])
}

// Open opens a value Seal sealed with any of the keys and the same aad,
// appending the plain value to dst. It fails with ErrOpen otherwise.
func (b *Box) Open(dst, sealed, aad []byte) ([]byte, error) {
	if len(sealed) < Overhead || sealed[0] != version {
		return nil, ErrOpen
	}
	for i, id := range b.ids {
		if !bytes.Equal(id[:], sealed[1:1+idLen]) {
			continue
		}
		aead := b.aeads[i]
		nonce := sealed[1+idLen : 1+idLen+aead.NonceSize()]
		out, err := aead.Open(dst, nonce, sealed[1+idLen+aead.NonceSize():], aad)
		if err == nil {
			return out, nil
		}
	}
	return nil, ErrOpen
}
