package interop_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
)

// A host adapts its own authentication to a SubjectResolver. The tenant
// comes from the credential, never from anything the client writes.
func ExampleSubjectResolverFunc() {
	keys := map[string]string{"demo-acme": "acme"}
	resolver := interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		tenant, known := keys[key]
		if !ok || !known {
			return interop.Subject{}, interop.ErrUnauthenticated
		}
		return interop.Subject{Tenant: tenant, Principal: "key:" + tenant, Authenticated: true}, nil
	})

	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer demo-acme")
	s, err := resolver.ResolveSubject(r)
	fmt.Println(s.Tenant, s.Authenticated, err)

	r.Header.Set("Authorization", "Bearer wrong")
	_, err = resolver.ResolveSubject(r)
	fmt.Println(err)
	// Output:
	// acme true <nil>
	// interop: unauthenticated
}
