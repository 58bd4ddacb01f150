package sealbox

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func key(t testing.TB) string {
	t.Helper()
	b := make([]byte, KeySize)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func TestParse(t *testing.T) {
	k1, k2 := key(t), key(t)
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	tests := []struct {
		name, in string
		n        int
		errHas   string
	}{
		{"one", k1, 1, ""},
		{"two with spaces", " " + k1 + " , " + k2, 2, ""},
		{"empty", "  ", 0, "no key"},
		{"empty entry", k1 + ",", 0, "key 2 is empty"},
		{"not base64", "not-base64!", 0, "key 1 is not standard base64"},
		{"url alphabet", strings.NewReplacer("+", "-", "/", "_").Replace(strings.Repeat("+/", 21) + "+w=="), 0, "key 1 is not standard base64"},
		{"short", k1 + "," + short, 0, "key 2 is 16 bytes long, not 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Parse(tt.in)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("Parse = %v, want an error with %q", err, tt.errHas)
				}
				if strings.Contains(err.Error(), k1) || strings.Contains(err.Error(), short) {
					t.Fatalf("the error shows a key: %v", err)
				}
				return
			}
			if err != nil || k.Len() != tt.n {
				t.Fatalf("Parse = %v, %v; want %d keys", k, err, tt.n)
			}
		})
	}
}

func TestSealOpen(t *testing.T) {
	old, cur := key(t), key(t)
	rotated, _ := Parse(cur + "," + old)
	before, _ := Parse(old)
	onlyNew, _ := Parse(cur)
	sealedOld := before.Box("session").Seal(nil, []byte("state"), []byte("aad"))
	sealedNew := rotated.Box("session").Seal(nil, []byte("state"), []byte("aad"))

	tests := []struct {
		name    string
		box     *Box
		sealed  []byte
		aad     string
		wantErr bool
	}{
		{"same key", before.Box("session"), sealedOld, "aad", false},
		{"old key after rotation", rotated.Box("session"), sealedOld, "aad", false},
		{"new key", onlyNew.Box("session"), sealedNew, "aad", false},
		{"old key dropped", onlyNew.Box("session"), sealedOld, "aad", true},
		{"not yet rotated", before.Box("session"), sealedNew, "aad", true},
		{"other purpose", rotated.Box("tokens"), sealedNew, "aad", true},
		{"other aad", rotated.Box("session"), sealedNew, "other", true},
		{"truncated", rotated.Box("session"), sealedNew[:len(sealedNew)-1], "aad", true},
		{"too short", rotated.Box("session"), sealedNew[:Overhead-1], "aad", true},
		{"flipped bit", rotated.Box("session"), flip(sealedNew, Overhead), "aad", true},
		{"other version", rotated.Box("session"), flip(sealedNew, 0), "aad", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.box.Open(nil, tt.sealed, []byte(tt.aad))
			if tt.wantErr {
				if !errors.Is(err, ErrOpen) {
					t.Fatalf("Open = %q, %v; want ErrOpen", got, err)
				}
				return
			}
			if err != nil || string(got) != "state" {
				t.Fatalf("Open = %q, %v", got, err)
			}
		})
	}
	if len(sealedNew) != len("state")+Overhead {
		t.Fatalf("sealed length %d, want %d", len(sealedNew), len("state")+Overhead)
	}
	if bytes.Equal(rotated.Box("session").Seal(nil, []byte("state"), nil), rotated.Box("session").Seal(nil, []byte("state"), nil)) {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 1
	return c
}

func TestMACKeys(t *testing.T) {
	k, _ := Parse(key(t) + "," + key(t))
	a, b := k.MACKeys("request-state"), k.MACKeys("session")
	if len(a) != 2 || bytes.Equal(a[0], b[0]) || bytes.Equal(a[0], a[1]) {
		t.Fatalf("MACKeys: %d keys, not distinct per purpose and key", len(a))
	}
}

func FuzzOpen(f *testing.F) {
	k := Random()
	box := k.Box("session")
	f.Add(box.Seal(nil, []byte("x"), nil))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		if out, err := box.Open(nil, b, nil); err == nil && len(out) != len(b)-Overhead {
			t.Fatalf("opened %d bytes from %d", len(out), len(b))
		}
	})
}

func BenchmarkSealOpen(b *testing.B) {
	box := Random().Box("session")
	plain := bytes.Repeat([]byte("x"), 200)
	for b.Loop() {
		s := box.Seal(nil, plain, nil)
		if _, err := box.Open(nil, s, nil); err != nil {
			b.Fatal(err)
		}
	}
}
