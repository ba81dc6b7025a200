package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Password policy. The upper bound keeps a login request from making the
// server hash megabytes; passphrases of any sensible length fit.
const (
	MinPasswordLength = 12   // characters
	MaxPasswordBytes  = 1024 // bytes
)

const (
	saltLen = 16 // bytes, as RFC 9106 recommends
	keyLen  = 32 // bytes

	// Bounds on parameters, also applied to parameters read back from the
	// database, so that a tampered hash cannot make a login allocate
	// gigabytes or loop for minutes.
	maxMemoryKiB = 1 << 20 // 1 GiB
	maxTime      = 64
)

// Hasher hashes passwords with argon2id. Its parameters are written into
// every hash (PHC string format), so a hash made with other parameters still
// verifies, and NeedsRehash tells when it should be upgraded.
type Hasher struct {
	Memory  uint32 // KiB
	Time    uint32 // passes over the memory
	Threads uint8  // lanes
}

// DefaultHasher returns the production parameters: 64 MiB, 2 passes, 2 lanes.
// On two cores one hash takes about 50 ms, slow enough to make offline
// guessing expensive and fast enough for a login form; the memory is what
// makes GPU guessing expensive. Service bounds how many run at once.
func DefaultHasher() Hasher {
	return Hasher{Memory: 64 * 1024, Time: 2, Threads: 2}
}

// Validate reports whether the parameters are usable.
func (h Hasher) Validate() error {
	switch {
	case h.Threads < 1:
		return errors.New("argon2 threads must be at least 1")
	case h.Time < 1 || h.Time > maxTime:
		return fmt.Errorf("argon2 time must be 1..%d", maxTime)
	case h.Memory < 8*uint32(h.Threads) || h.Memory > maxMemoryKiB:
		return fmt.Errorf("argon2 memory must be %d..%d KiB", 8*uint32(h.Threads), maxMemoryKiB)
	}
	return nil
}

// ValidatePassword applies the policy to a new password. Length is counted
// in characters, so that a passphrase in any script needs the same effort.
func ValidatePassword(password string) error {
	if len(password) > MaxPasswordBytes {
		return fmt.Errorf("%w: at most %d bytes", ErrPasswordTooLong, MaxPasswordBytes)
	}
	if utf8.RuneCountInString(password) < MinPasswordLength {
		return fmt.Errorf("%w: at least %d characters", ErrPasswordTooShort, MinPasswordLength)
	}
	return nil
}

// Hash returns the PHC-encoded argon2id hash of password with a fresh salt:
// "$argon2id$v=19$m=65536,t=2,p=2$<salt>$<hash>" (unpadded standard base64).
// It does not apply the length policy except the upper bound.
func (h Hasher) Hash(password string) (string, error) {
	if len(password) > MaxPasswordBytes {
		return "", ErrPasswordTooLong
	}
	if err := h.Validate(); err != nil {
		return "", err
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, h.Time, h.Memory, h.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.Memory, h.Time, h.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify reports whether password matches encoded, using the parameters
// written in encoded (not h's). The comparison takes constant time. An error
// means encoded is not a hash this package can read.
func (h Hasher) Verify(encoded, password string) (bool, error) {
	p, err := parsePHC(encoded)
	if err != nil {
		return false, err
	}
	if len(password) > MaxPasswordBytes {
		return false, nil // Hash never accepted it, so it cannot match
	}
	key := argon2.IDKey([]byte(password), p.salt, p.params.Time, p.params.Memory, p.params.Threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}

// NeedsRehash reports whether encoded was made with other parameters than
// h's (or cannot be read), so that a login can store a fresh hash while it
// has the password in hand.
func (h Hasher) NeedsRehash(encoded string) bool {
	p, err := parsePHC(encoded)
	return err != nil || p.params != h || len(p.salt) != saltLen || len(p.key) != keyLen
}

type phc struct {
	params    Hasher
	salt, key []byte
}

var errBadHash = errors.New("malformed argon2id hash")

// parsePHC reads "$argon2id$v=19$m=…,t=…,p=…$salt$hash" strictly, with
// bounds on every number.
func parsePHC(encoded string) (phc, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return phc{}, errBadHash
	}
	fields := strings.Split(parts[3], ",")
	if len(fields) != 3 {
		return phc{}, errBadHash
	}
	var nums [3]uint64
	for i, name := range []string{"m", "t", "p"} {
		v, ok := strings.CutPrefix(fields[i], name+"=")
		if !ok {
			return phc{}, errBadHash
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return phc{}, errBadHash
		}
		nums[i] = n
	}
	if nums[2] > 255 {
		return phc{}, errBadHash
	}
	p := phc{params: Hasher{Memory: uint32(nums[0]), Time: uint32(nums[1]), Threads: uint8(nums[2])}}
	if err := p.params.Validate(); err != nil {
		return phc{}, fmt.Errorf("%w: %w", errBadHash, err)
	}
	var err error
	if p.salt, err = base64.RawStdEncoding.Strict().DecodeString(parts[4]); err != nil || len(p.salt) < 8 || len(p.salt) > 64 {
		return phc{}, errBadHash
	}
	if p.key, err = base64.RawStdEncoding.Strict().DecodeString(parts[5]); err != nil || len(p.key) < 16 || len(p.key) > 64 {
		return phc{}, errBadHash
	}
	return p, nil
}
