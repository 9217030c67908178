package generate

import "errors"

// Templates turns the file into IPPools and a Metal3DataTemplate per logical unit (phase 2).
func Templates(f *File, o Options) ([]byte, error) {
	return nil, errors.New("not yet")
}
