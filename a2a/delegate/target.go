package delegate

import (
	"context"
	"net/http"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// target is what every request to one negotiated interface carries, whatever
// the binding: the interface URL, the negotiated version, the tenant, the
// credential and the limits. Both transports build their requests with it.
type target struct {
	url     string
	version string // sent as A2A-Version on every request
	tenant  string // the interface's AgentInterface.tenant
	http    *http.Client
	// credential returns the Authorization value to present, "" for none.
	// It runs at every request, so a rotated credential is picked up.
	credential func(ctx context.Context) (string, error)
	maxBytes   int64         // one response body or stream event
	timeout    time.Duration // one unary call
}

// passedParam is the one service parameter a caller may add to a request
// (through a2aclient.AttachServiceParams): A2A-Extensions, which activates
// extensions (A2A 1.0 §3.2.6). Everything else a request carries is the
// connection's own — the version, the credential — and no caller can
// replace it.
const passedParam = wire.SvcParamExtensions

// setHeaders writes the headers of one request: the negotiated
// A2A-Version (A2A 1.0 §3.6.1; never a version below the floor, since it
// is the one Connect negotiated), the credential, and the service
// parameters a caller may pass.
func (p *target) setHeaders(ctx context.Context, h http.Header, params a2aclient.ServiceParams) error {
	h.Set(wire.SvcParamVersion, p.version)
	if vs := params.Get(passedParam); len(vs) > 0 {
		h.Set(passedParam, strings.Join(vs, ","))
	}
	if p.credential != nil {
		v, err := p.credential(ctx)
		if err != nil {
			return err
		}
		if v != "" {
			h.Set("Authorization", v)
		}
	}
	return nil
}

// unaryContext bounds one unary call by the peer's timeout, unless ctx
// already ends sooner.
func (p *target) unaryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.timeout <= 0 {
		return ctx, func() {}
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= p.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, p.timeout)
}
