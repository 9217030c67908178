package manager

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// rememberingMapper answers RESTMapping from memory once it has found a kind. The cache of a
// manager limited to namespaces (--namespace) asks whether a kind is namespaced on every Get and
// List; controller-runtime's mapper answers by trying every version of the group and building an
// error for each miss, which was a third of all the bytes the data path allocated at 1,000
// machines. A kind's mapping does not change while its CRD stays; misses are not remembered, so
// a CRD installed later is found.
type rememberingMapper struct {
	meta.RESTMapper
	mu    sync.RWMutex
	found map[mappingKey]meta.RESTMapping
}

// mappingKey is a question: a kind and the versions asked for, joined.
type mappingKey struct {
	gk       schema.GroupKind
	versions string
}

func newRememberingMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &rememberingMapper{RESTMapper: m, found: map[mappingKey]meta.RESTMapping{}}, nil
}

// RESTMapping is the underlying mapper's answer, remembered when it found one.
func (m *rememberingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := mappingKey{gk: gk, versions: strings.Join(versions, ",")}
	m.mu.RLock()
	found, ok := m.found[key]
	m.mu.RUnlock()
	if ok {
		return &found, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.found[key] = *mapping
	m.mu.Unlock()
	return mapping, nil
}
