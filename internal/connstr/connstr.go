// Package connstr reads Azure Storage connection strings once, for every
// tablekit package that accepts one: it names what is wrong with a malformed
// string before any client is built, and turns the emulator shorthand
// "UseDevelopmentStorage=true", which the Go SDKs refuse, into the explicit
// endpoints of a local Azurite.
package connstr

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMalformed is matched by every error Parse returns.
var ErrMalformed = errors.New("malformed connection string")

// Error says what is wrong with a connection string. It never repeats the
// account key or signature.
type Error struct {
	Reason string
}

func (e *Error) Error() string { return "connection string: " + e.Reason }

// Is makes errors.Is(err, ErrMalformed) true.
func (e *Error) Is(target error) bool { return target == ErrMalformed }

// The development storage account (Azurite's defaults).
const (
	DevAccountName   = "devstoreaccount1"
	DevAccountKey    = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devBlobEndpoint  = "http://127.0.0.1:10000/devstoreaccount1"
	devQueueEndpoint = "http://127.0.0.1:10001/devstoreaccount1"
	devTableEndpoint = "http://127.0.0.1:10002/devstoreaccount1"
)

// Parsed is a connection string's settings.
type Parsed struct {
	AccountName, AccountKey string
	SAS                     string // SharedAccessSignature, without a leading '?'
	Protocol                string // DefaultEndpointsProtocol; "https" when absent
	EndpointSuffix          string // "core.windows.net" when absent
	TableEndpoint           string // explicit, or derived; always ends with '/'
	QueueEndpoint           string
	BlobEndpoint            string
}

// Parse reads a connection string. "UseDevelopmentStorage=true" (with an
// optional DevelopmentStorageProxyUri, whose host replaces 127.0.0.1) stands
// for Azurite's well-known account on its default ports.
func Parse(s string) (Parsed, error) {
	kv := map[string]string{}
	for part := range strings.SplitSeq(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return Parsed{}, &Error{Reason: fmt.Sprintf("%q is not a key=value setting", redact(part))}
		}
		k = strings.TrimSpace(k)
		for seen := range kv {
			if strings.EqualFold(seen, k) {
				return Parsed{}, &Error{Reason: fmt.Sprintf("setting %s appears twice", k)}
			}
		}
		kv[k] = strings.TrimSpace(v)
	}
	if len(kv) == 0 {
		return Parsed{}, &Error{Reason: "empty"}
	}
	get := func(k string) string {
		for key, v := range kv {
			if strings.EqualFold(key, k) {
				return v
			}
		}
		return ""
	}
	if dev := get("UseDevelopmentStorage"); dev != "" {
		if !strings.EqualFold(dev, "true") {
			return Parsed{}, &Error{Reason: fmt.Sprintf("UseDevelopmentStorage=%s: only true is meaningful", dev)}
		}
		p := Parsed{
			AccountName: DevAccountName, AccountKey: DevAccountKey, Protocol: "http", EndpointSuffix: "core.windows.net",
			TableEndpoint: devTableEndpoint + "/", QueueEndpoint: devQueueEndpoint + "/", BlobEndpoint: devBlobEndpoint + "/",
		}
		if proxy := get("DevelopmentStorageProxyUri"); proxy != "" {
			host := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(proxy, "http://"), "https://"), "/")
			if host == "" || strings.ContainsAny(host, "/?#") {
				return Parsed{}, &Error{Reason: fmt.Sprintf("DevelopmentStorageProxyUri %q is not a host", proxy)}
			}
			for _, ep := range []*string{&p.TableEndpoint, &p.QueueEndpoint, &p.BlobEndpoint} {
				*ep = strings.Replace(*ep, "127.0.0.1", host, 1)
			}
		}
		return p, nil
	}
	p := Parsed{
		AccountName:    get("AccountName"),
		AccountKey:     get("AccountKey"),
		SAS:            strings.TrimPrefix(get("SharedAccessSignature"), "?"),
		Protocol:       get("DefaultEndpointsProtocol"),
		EndpointSuffix: get("EndpointSuffix"),
	}
	if p.Protocol == "" {
		p.Protocol = "https"
	}
	if p.Protocol != "https" && p.Protocol != "http" {
		return Parsed{}, &Error{Reason: fmt.Sprintf("DefaultEndpointsProtocol=%s: want https or http", p.Protocol)}
	}
	if p.EndpointSuffix == "" {
		p.EndpointSuffix = "core.windows.net"
	}
	if p.AccountKey == "" && p.SAS == "" {
		return Parsed{}, &Error{Reason: "neither AccountKey nor SharedAccessSignature is set"}
	}
	if p.AccountKey != "" && p.AccountName == "" {
		return Parsed{}, &Error{Reason: "AccountKey without AccountName"}
	}
	endpoint := func(explicit, service string) (string, error) {
		if e := get(explicit); e != "" {
			if !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
				return "", &Error{Reason: fmt.Sprintf("%s %q is not an http(s) URL", explicit, e)}
			}
			return withSlash(e), nil
		}
		if p.AccountName == "" {
			return "", nil
		}
		return fmt.Sprintf("%s://%s.%s.%s/", p.Protocol, p.AccountName, service, p.EndpointSuffix), nil
	}
	var err error
	if p.TableEndpoint, err = endpoint("TableEndpoint", "table"); err != nil {
		return Parsed{}, err
	}
	if p.QueueEndpoint, err = endpoint("QueueEndpoint", "queue"); err != nil {
		return Parsed{}, err
	}
	if p.BlobEndpoint, err = endpoint("BlobEndpoint", "blob"); err != nil {
		return Parsed{}, err
	}
	if p.TableEndpoint == "" && p.QueueEndpoint == "" && p.BlobEndpoint == "" {
		return Parsed{}, &Error{Reason: "no AccountName and no explicit endpoint"}
	}
	return p, nil
}

// String writes p back as a connection string with explicit endpoints,
// which every Go storage SDK accepts.
func (p Parsed) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("DefaultEndpointsProtocol", p.Protocol)
	add("AccountName", p.AccountName)
	add("AccountKey", p.AccountKey)
	add("SharedAccessSignature", p.SAS)
	add("EndpointSuffix", p.EndpointSuffix)
	add("TableEndpoint", p.TableEndpoint)
	add("QueueEndpoint", p.QueueEndpoint)
	add("BlobEndpoint", p.BlobEndpoint)
	return strings.Join(parts, ";")
}

// Normalize parses s and writes it back with explicit endpoints.
func Normalize(s string) (string, error) {
	p, err := Parse(s)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

func withSlash(u string) string {
	if strings.HasSuffix(u, "/") {
		return u
	}
	return u + "/"
}

// redact hides a setting's value when it may be a secret.
func redact(part string) string {
	if len(part) > 12 {
		return part[:6] + "…"
	}
	return part
}
