package a2a

// The A2A operation table (A2A 1.0.1 §5.3, §9.4, §11; OpenWOP interop map,
// a2a.operations). The server implements the A2A methods once, behind
// operations; each binding only decodes a request into the a2a-go request
// type, calls the row's operation through invoke and encodes what comes
// back. A row says everything a binding needs to know of a method: its
// name, the shape of its request (for the member-case check of JSON-RPC
// params and HTTP+JSON bodies), where a task-addressed request holds its
// task id, its HTTP+JSON route and verbs and what that route reads from
// the path, the query and the body, how its result is wrapped, and
// whether it streams. invoke gates every method — the row's `requires`
// facets, read from the interop map — in one place.

import (
	"context"
	"errors"
	"iter"
	"net/http"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/interopmap"
)

// operations are the A2A methods over the host's RunStore, shaped like
// a2a-go's a2asrv.RequestHandler: each takes the call (the authenticated,
// negotiated request; call.go) and the decoded a2a-go request, and returns
// an a2a-go result or an error — an *Error for every refusal; anything
// else is a server fault. A stream yields a refusal as its first and only
// element, so a binding answers it as a plain error. *Server implements
// them: send.go, tasks.go, pushconfig.go and card.go.
type operations interface {
	sendMessage(context.Context, *call, *wire.SendMessageRequest) (*wire.Task, error)
	sendStreamingMessage(context.Context, *call, *wire.SendMessageRequest) iter.Seq2[wire.Event, error]
	getTask(context.Context, *call, *wire.GetTaskRequest) (*wire.Task, error)
	listTasks(context.Context, *call, *wire.ListTasksRequest) (*wire.ListTasksResponse, error)
	cancelTask(context.Context, *call, *wire.CancelTaskRequest) (*wire.Task, error)
	subscribeToTask(context.Context, *call, *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error]
	createTaskPushConfig(context.Context, *call, *wire.PushConfig) (*wire.PushConfig, error)
	getTaskPushConfig(context.Context, *call, *wire.GetTaskPushConfigRequest) (*wire.PushConfig, error)
	listTaskPushConfigs(context.Context, *call, *wire.ListTaskPushConfigRequest) (*wire.ListTaskPushConfigResponse, error)
	deleteTaskPushConfig(context.Context, *call, *wire.DeleteTaskPushConfigRequest) error
	getExtendedAgentCard(context.Context, *call, *wire.GetExtendedAgentCardRequest) (*wire.AgentCard, error)
}

var _ operations = (*Server)(nil)

// Method names of A2A 1.0.1 (§5.3, §9.4).
const (
	methodSendMessage          = "SendMessage"
	methodSendStreamingMessage = "SendStreamingMessage"
	methodGetTask              = "GetTask"
	methodListTasks            = "ListTasks"
	methodCancelTask           = "CancelTask"
	methodSubscribeToTask      = "SubscribeToTask"
	methodCreatePushConfig     = "CreateTaskPushNotificationConfig"
	methodGetPushConfig        = "GetTaskPushNotificationConfig"
	methodListPushConfigs      = "ListTaskPushNotificationConfigs"
	methodDeletePushConfig     = "DeleteTaskPushNotificationConfig"
	methodGetExtendedAgentCard = "GetExtendedAgentCard"
)

// resultKind is how a unary result is wrapped on the wire.
type resultKind uint8

const (
	// resultPlain is the result itself.
	resultPlain resultKind = iota
	// resultInTask is SendMessageResponse: {"task": result}.
	resultInTask
	// resultEmpty is google.protobuf.Empty, {}, of a delete.
	resultEmpty
)

// operation is one row of the table.
type operation struct {
	// method is the A2A method name, JSON-RPC's "method".
	method string
	// shape is the request's shape: JSON-RPC params, an HTTP+JSON body.
	shape shape
	// request returns the row's request, zeroed, in its slot of a
	// binding's pooled requests (body.go), and where it holds its task id
	// (nil when it addresses no task).
	request func(*requests) (req any, taskID *wire.TaskID)
	// taskField names the task id member of a task-addressed request.
	taskField string
	// route is the HTTP+JSON path pattern (rest_routes.go) and verbs the
	// methods it answers to there.
	route string
	verbs []string
	// fromREST fills the request from an HTTP+JSON request: path, query,
	// body (rest_decode.go). The task id of the path is bound after it.
	fromREST func(in restInput, req any) error
	// result wraps a unary result.
	result resultKind
	// unary runs a unary method, events opens a streaming one: exactly
	// one is set.
	unary  func(ops operations, ctx context.Context, c *call, req any) (any, error)
	events func(ops operations, ctx context.Context, c *call, req any) iter.Seq2[wire.Event, error]
}

// HTTP verbs of the routes.
var (
	onlyGet    = []string{http.MethodGet}
	onlyPost   = []string{http.MethodPost}
	onlyDelete = []string{http.MethodDelete}
	getAndPost = []string{http.MethodGet, http.MethodPost}
)

// operationTable lists every A2A method, in the order of A2A 1.0.1 §9.4.
var operationTable = [...]operation{{
	method: methodSendMessage, shape: shapeSendMessageRequest, request: (*requests).sendMessage, result: resultInTask,
	route: routeSend, verbs: onlyPost, fromREST: restSendMessage, unary: unary(operations.sendMessage),
}, {
	method: methodSendStreamingMessage, shape: shapeSendMessageRequest, request: (*requests).sendMessage,
	route: routeStream, verbs: onlyPost, fromREST: restSendMessage, events: streaming(operations.sendStreamingMessage),
}, {
	method: methodGetTask, shape: shapeGetTaskRequest, request: (*requests).getTask, taskField: "id",
	route: routeTask, verbs: onlyGet, fromREST: restGetTask, unary: unary(operations.getTask),
}, {
	method: methodListTasks, shape: shapeListTasksRequest, request: (*requests).listTasks,
	route: routeTasks, verbs: onlyGet, fromREST: restListTasks, unary: unary(operations.listTasks),
}, {
	method: methodCancelTask, shape: shapeCancelTaskRequest, request: (*requests).cancelTask, taskField: "id",
	route: routeCancel, verbs: onlyPost, fromREST: restCancelTask, unary: unary(operations.cancelTask),
}, {
	// HTTP+JSON takes GET too (OpenWOP interop map, a2a.operations).
	method: methodSubscribeToTask, shape: shapeSubscribeRequest, request: (*requests).subscribeToTask, taskField: "id",
	route: routeSubscribe, verbs: getAndPost, fromREST: restSubscribe, events: streaming(operations.subscribeToTask),
}, {
	method: methodCreatePushConfig, shape: shapePushConfig, request: (*requests).createPushConfig, taskField: "taskId",
	route: routeConfigs, verbs: onlyPost, fromREST: restCreatePushConfig, unary: unary(operations.createTaskPushConfig),
}, {
	method: methodGetPushConfig, shape: shapeGetPushConfigRequest, request: (*requests).getPushConfig, taskField: "taskId",
	route: routeConfig, verbs: onlyGet, fromREST: restGetPushConfig, unary: unary(operations.getTaskPushConfig),
}, {
	method: methodListPushConfigs, shape: shapeListPushConfigsRequest, request: (*requests).listPushConfigs, taskField: "taskId",
	route: routeConfigs, verbs: onlyGet, fromREST: restListPushConfigs, unary: unary(operations.listTaskPushConfigs),
}, {
	method: methodDeletePushConfig, shape: shapeDeletePushConfigRequest, request: (*requests).deletePushConfig, taskField: "taskId",
	route: routeConfig, verbs: onlyDelete, fromREST: restDeletePushConfig, unary: deletion(operations.deleteTaskPushConfig), result: resultEmpty,
}, {
	method: methodGetExtendedAgentCard, shape: shapeExtendedCardRequest, request: (*requests).extendedCard,
	route: routeCard, verbs: onlyGet, fromREST: restExtendedCard, unary: unary(operations.getExtendedAgentCard),
}}

// lookupMethod returns the row of an A2A method name, nil for an unknown
// one. It does not allocate.
func lookupMethod(name []byte) *operation {
	for i := range operationTable {
		if string(name) == operationTable[i].method {
			return &operationTable[i]
		}
	}
	return nil
}

// invoke runs op for a binding: it gates the method, has the binding
// decode the request (decode fills the zero request it is given, in its
// slot of reqs, and binds its task id) and runs the operation. It returns a unary result, or the events of a stream; a
// refusal before either — the gate's, the decoding's — is its error. A
// panic in it is the request's internal error, logged once with where.
func (s *Server) invoke(ctx context.Context, where string, c *call, op *operation, reqs *requests, decode func(req any, taskID *wire.TaskID) error) (result any, events iter.Seq2[wire.Event, error], err error) {
	defer s.recoverInto(ctx, where, op.method, &err)
	if err := s.gate(op.method); err != nil {
		return nil, nil, err
	}
	req, taskID := op.request(reqs)
	if err := decode(req, taskID); err != nil {
		return nil, nil, err
	}
	if op.events != nil {
		return nil, op.events(s, ctx, c, req), nil
	}
	result, err = op.unary(s, ctx, c, req)
	return result, nil, err
}

// unary adapts a unary operation to a row. An operation that returns
// neither a result nor an error broke its contract: errNoResult.
func unary[Req, Res any](op func(operations, context.Context, *call, *Req) (*Res, error)) func(operations, context.Context, *call, any) (any, error) {
	return func(ops operations, ctx context.Context, c *call, req any) (any, error) {
		res, err := op(ops, ctx, c, req.(*Req))
		switch {
		case err != nil:
			return nil, err
		case res == nil:
			return nil, errNoResult
		}
		return res, nil
	}
}

// deletion adapts an operation whose success has no result.
func deletion[Req any](op func(operations, context.Context, *call, *Req) error) func(operations, context.Context, *call, any) (any, error) {
	return func(ops operations, ctx context.Context, c *call, req any) (any, error) {
		return nil, op(ops, ctx, c, req.(*Req))
	}
}

// streaming adapts a streaming operation to a row.
func streaming[Req any](op func(operations, context.Context, *call, *Req) iter.Seq2[wire.Event, error]) func(operations, context.Context, *call, any) iter.Seq2[wire.Event, error] {
	return func(ops operations, ctx context.Context, c *call, req any) iter.Seq2[wire.Event, error] {
		return op(ops, ctx, c, req.(*Req))
	}
}

// advertised reports whether a facet named by a map row's `requires` is on.
func (s *Server) advertised(facet string) bool {
	switch facet {
	case "a2a.streaming":
		return s.served.Streaming
	case "a2a.pushNotifications":
		return s.served.PushNotifications
	case "a2a.durableTasks":
		return s.served.DurableTasks
	}
	return false
}

// gate refuses a method whose map row requires a facet that is off, with
// the row's error (OpenWOP interop.md §The operation mappings; interop
// map, a2a.operations), and a method the map does not know with -32601.
// SendMessage's rows require nothing.
func (s *Server) gate(method string) error {
	if method == methodSendMessage {
		return nil
	}
	err := s.m.A2AGate(method, "", s.advertised)
	var off *interopmap.FacetOffError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &off):
		return s.errs.row(off.Refusal.JSONRPC, "the operation requires "+off.Facet+", which this host does not offer")
	default:
		return methodNotFound()
	}
}
