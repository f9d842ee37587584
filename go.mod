module github.com/wopinterop/wopinterop

go 1.26

require (
	github.com/a2aproject/a2a-go/v2 v2.4.0
	github.com/google/go-cmp v0.7.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
)

require (
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/text v0.37.0 // indirect
)
