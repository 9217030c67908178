// Package waits decides when a new object's wait is worth a status write. In a scale-up every
// Metal3DataClaim and Metal3Data waits a few seconds for the next controller; writing "waiting"
// and then "ready" doubles the status writes for words nobody reads. A wait that lasts is
// written, and so is any wait on an object whose status already says something else.
package waits

import "time"

// DefaultQuiet is how long a new object's first wait stays unwritten: about the time a thousand
// machines' data takes on a small API server (docs/scale.md). A wait longer than that is worth
// showing; in a larger scale-up the machines served last pay one more write each for it.
const DefaultQuiet = 30 * time.Second

// Unwritten returns how much longer the wait of an object created at created may stay
// unwritten: zero when it is to be written now. reported says whether the object's status
// already says something (a condition): then the wait is written at once, as the old words
// would mislead. quiet zero means DefaultQuiet; negative writes every wait at once.
func Unwritten(created time.Time, reported bool, quiet time.Duration, now time.Time) time.Duration {
	if quiet == 0 {
		quiet = DefaultQuiet
	}
	if reported || quiet < 0 {
		return 0
	}
	return max(created.Add(quiet).Sub(now), 0)
}
