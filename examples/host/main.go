package main

import "github.com/wopinterop/wopinterop/examples/host/hostapp"

func main() { hostapp.RunMain(hostapp.Backend{}) }
