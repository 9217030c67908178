package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Sentinels for errors.Is. The concrete errors carry a message a person can act on; these only
// let a controller choose a condition reason or a requeue without parsing text.
var (
	// ErrPoolExhausted: every address of the pool is allocated, reserved or cooling.
	ErrPoolExhausted = errors.New("pool exhausted")
	// ErrAddressTaken: the requested address belongs to another owner (allocated or reserved).
	ErrAddressTaken = errors.New("address taken")
	// ErrNotInPool: the address is outside every range, excluded, a gateway, or a network or
	// broadcast address.
	ErrNotInPool = errors.New("address not in pool")
	// ErrCooling: the address was released by another owner less than the reuse grace period ago.
	ErrCooling = errors.New("address cooling after release")
	// ErrOwnerConflict: the owner already holds (or is pinned to) a different address.
	ErrOwnerConflict = errors.New("owner holds another address")
)

// FieldError is one invalid field of a pool spec. Field is relative to the IPPool spec
// ("pools[1].end"), so a caller adds "spec." when it reports the whole object path.
type FieldError struct {
	Field  string
	Detail string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Detail }

// FieldErrors are all the problems of a spec at once, so a user fixes them in one edit.
type FieldErrors []*FieldError

func (l FieldErrors) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// unique drops repeats: a bad top-level default is reported once, not once per entry using it.
func (l FieldErrors) unique() FieldErrors {
	seen := map[FieldError]bool{}
	out := l[:0:0]
	for _, e := range l {
		if !seen[*e] {
			seen[*e] = true
			out = append(out, e)
		}
	}
	return out
}

func (l *FieldErrors) add(field, format string, args ...any) {
	*l = append(*l, &FieldError{Field: field, Detail: fmt.Sprintf(format, args...)})
}

// ExhaustedError says how big the pool is and what would free room. It matches ErrPoolExhausted.
type ExhaustedError struct {
	Total Count
	// Cooling addresses are free once their grace period passes; NextFree is the earliest such time
	// (zero when none), so a controller can requeue then instead of polling.
	Cooling  int
	NextFree time.Time
}

func (e *ExhaustedError) Error() string {
	if e.Total.IsZero() {
		return "pool has no address to hand out: add a range to spec.pools (or remove exclusions)"
	}
	msg := fmt.Sprintf("pool has %s addresses, all in use: add a range to spec.pools or release addresses", e.Total)
	if e.Cooling > 0 {
		msg += fmt.Sprintf("; %d released addresses become free again from %s (reuseGracePeriod)",
			e.Cooling, e.NextFree.UTC().Format(time.RFC3339))
	}
	return msg
}

func (e *ExhaustedError) Is(target error) bool { return target == ErrPoolExhausted }

// AddressError is a refused request for one address. It unwraps to one of the sentinels above.
type AddressError struct {
	Addr netip.Addr
	Err  error
	// Until is when a cooling address may be handed to another owner (ErrCooling only).
	Until  time.Time
	Detail string
}

func (e *AddressError) Error() string { return e.Detail }
func (e *AddressError) Unwrap() error { return e.Err }

func addressError(addr netip.Addr, kind error, format string, args ...any) *AddressError {
	return &AddressError{Addr: addr, Err: kind, Detail: fmt.Sprintf(format, args...)}
}
