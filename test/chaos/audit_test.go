package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// auditEvent is the part of a kube-apiserver audit event the checks read.
type auditEvent struct {
	Verb      string `json:"verb"`
	Stage     string `json:"stage"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// writes counts the successful writes the API server recorded in namespace ns, by resource
// ("secrets", "metal3datas", "ipaddresses", ...), verb and object name. A refused write (409
// AlreadyExists, a conflict) changed nothing and is not counted.
type writes map[string]map[string]map[string]int

// refused lists, per resource and name, the writes that got an error answer (for messages).
type refused map[string]map[string][]string

// readAuditAll reads the audit log kube-apiserver appended to across all its restarts: the
// writes that succeeded or may have, and those refused.
func readAuditAll(path string) (writes, refused, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the audit log: %w", err)
	}
	defer f.Close()
	out, bad := writes{}, refused{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, fmt.Errorf("audit log: %w", err)
		}
		if e.ObjectRef == nil || e.ObjectRef.Namespace != ns {
			continue
		}
		resource := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			resource += "/" + e.ObjectRef.Subresource
		}
		verb := e.Verb
		if e.ResponseStatus == nil || e.ResponseStatus.Code == 0 || e.ResponseStatus.Code >= 500 {
			// The request's client went away (a killed manager) or the server failed it: the
			// write may have been stored all the same.
			verb += maybe
		}
		if e.ResponseStatus != nil && e.ResponseStatus.Code >= 300 && e.ResponseStatus.Code < 500 {
			if bad[resource] == nil {
				bad[resource] = map[string][]string{}
			}
			code := 0
			if e.ResponseStatus != nil {
				code = e.ResponseStatus.Code
			}
			bad[resource][e.ObjectRef.Name] = append(bad[resource][e.ObjectRef.Name], fmt.Sprintf("%s %s: %d", e.Stage, e.Verb, code))
			continue
		}
		if out[resource] == nil {
			out[resource] = map[string]map[string]int{}
		}
		if out[resource][verb] == nil {
			out[resource][verb] = map[string]int{}
		}
		out[resource][verb][e.ObjectRef.Name]++
	}
	return out, bad, sc.Err()
}

// maybe marks, after a verb, writes whose outcome the audit log cannot tell: the API server
// answered with no code or a server error (a client killed mid-request shows so), yet the
// write may have been stored.
const maybe = "?"

// names is every object the verb may have written: successes and unknown outcomes.
func (w writes) names(resource, verb string) map[string]bool {
	out := map[string]bool{}
	for _, v := range []string{verb, verb + maybe} {
		for name := range w[resource][v] {
			out[name] = true
		}
	}
	return out
}

// more lists the objects written with the verb more than once, with their counts.
func (w writes) more(resource, verb string) map[string]int {
	out := map[string]int{}
	for name, c := range w[resource][verb] {
		if c > 1 {
			out[name] = c
		}
	}
	return out
}
