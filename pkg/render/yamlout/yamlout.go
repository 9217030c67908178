// Package yamlout writes the documents metalwire renders (network data, netplan, nmstate,
// os-net-config, metaData) as YAML, exactly as sigs.k8s.io/yaml.Marshal writes them, without its
// round trip. sigs.k8s.io/yaml encodes a value to JSON, parses that JSON with yaml.v2's YAML
// parser to learn which numbers are integers, and encodes the result with yaml.v2; the parse is
// most of the cost (a rendered machine's documents cost more to re-read than to build). Here the
// value is handed to the same yaml.v2 encoder as the JSON-shaped tree that parse would have
// produced: the same keys in the same order, the same quoting, the same numbers. One difference
// is deliberate: a NEL (U+0085) inside a string, which that re-read takes for a line break and
// folds into a space, is written as given (TestMarshalKeepsNEL).
package yamlout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v2"
)

// Marshal writes v as YAML, byte for byte as sigs.k8s.io/yaml.Marshal(v) does, but for a string
// holding a NEL, which it keeps (see the package's doc).
func Marshal(v any) ([]byte, error) {
	tree, err := Value(v)
	if err != nil {
		return nil, err
	}
	return Encode(tree)
}

// Encode writes a tree Value returned as YAML.
func Encode(tree any) ([]byte, error) {
	return yaml.Marshal(tree)
}

// Value returns v as the JSON-shaped tree encoding/json would write it: map[string]any, []any,
// string, bool, nil and numbers, where a number is an int (int64 or uint64 when it does not fit)
// if its JSON text is an integer, else a float64, as yaml.v2 reads a JSON number. The values
// metalwire's writers build (maps, slices and scalars) are converted in place of an encoding;
// anything else (a struct with json tags, a json.Marshaler) goes through encoding/json.
func Value(v any) (any, error) {
	switch t := v.(type) {
	case nil, bool:
		return t, nil
	case string:
		if !utf8.ValidString(t) {
			// encoding/json writes each invalid byte as U+FFFD; yaml.v2 would write the
			// string as !!binary.
			return viaJSON(t)
		}
		return t, readable(t)
	case int:
		return t, nil
	case int32:
		return int(t), nil
	case int64:
		return intOf(t), nil
	case float64:
		return floatOf(t)
	case map[string]any:
		if t == nil {
			return nil, nil
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			if !utf8.ValidString(k) {
				return viaJSON(t)
			}
			if err := readable(k); err != nil {
				return nil, err
			}
			c, err := Value(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = c
		}
		return out, nil
	case map[string]string:
		if t == nil {
			return nil, nil
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			if !utf8.ValidString(k) || !utf8.ValidString(e) {
				return viaJSON(t)
			}
			if err := errors.Join(readable(k), readable(e)); err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case []any:
		return values(t)
	case []map[string]any:
		return values(t)
	case []string:
		if t == nil {
			return nil, nil
		}
		out := make([]any, len(t))
		for i, e := range t {
			if !utf8.ValidString(e) {
				return viaJSON(t)
			}
			if err := readable(e); err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	return viaJSON(v)
}

// values converts each element of a list with Value; a nil list is a null, as encoding/json
// writes it.
func values[E any](list []E) (any, error) {
	if list == nil {
		return nil, nil
	}
	out := make([]any, len(list))
	for i, e := range list {
		c, err := Value(e)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// errControl is sigs.k8s.io/yaml's refusal of a document with a character YAML does not allow
// unescaped: its parse reads the JSON text, where encoding/json leaves these characters as they are.
var errControl = errors.New("yaml: control characters are not allowed")

// readable refuses what yaml.v2's reader refuses in the JSON text of s: DEL, the C1 controls
// but NEL, and the non-characters U+FFFE and U+FFFF (encoding/json escapes the C0 controls).
func readable(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7f {
			return readableRunes(s[i:])
		}
	}
	return nil
}

func readableRunes(s string) error {
	for _, r := range s {
		if r == 0x7f || (r >= 0x80 && r <= 0x9f && r != 0x85) || r == 0xfffe || r == 0xffff {
			return errControl
		}
	}
	return nil
}

// viaJSON converts what Value has no case for through encoding/json, reading numbers as yaml.v2
// would.
func viaJSON(v any) (any, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("error marshaling into JSON: %w", err)
	}
	if !utf8.Valid(j) {
		// Only a json.RawMessage passes invalid UTF-8 through; yaml.v2 refuses to read it.
		return nil, errors.New("yaml: invalid UTF-8 in the JSON of a value")
	}
	if err := readable(string(j)); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return numbers(tree)
}

// numbers replaces the json.Numbers of a decoded tree by the int or float64 yaml.v2 reads.
func numbers(v any) (any, error) {
	switch t := v.(type) {
	case json.Number:
		return number(string(t))
	case map[string]any:
		for k, e := range t {
			c, err := numbers(e)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
	case []any:
		for i, e := range t {
			c, err := numbers(e)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
	}
	return v, nil
}

// number reads a JSON number as yaml.v2 resolves a plain scalar: an int if it fits, else int64,
// else uint64, else float64.
func number(s string) (any, error) {
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		return intOf(i), nil
	}
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return u, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %q: %w", s, err)
	}
	return f, nil
}

func intOf(i int64) any {
	if i == int64(int(i)) {
		return int(i)
	}
	return i
}

// floatOf is a float64 as encoding/json writes it and yaml.v2 reads it back: integral values
// (written without a fraction) come back as integers; NaN and infinities are not JSON.
func floatOf(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("error marshaling into JSON: json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return number(jsonFloat(f))
}

// jsonFloat is encoding/json's text of f.
func jsonFloat(f float64) string {
	b, err := json.Marshal(f)
	if err != nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(b)
}
