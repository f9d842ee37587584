// Package push will hold A2A push delivery: the egress guard, push-config
// storage and the at-least-once delivery worker (RULES §10–§11). It has no
// code yet.
package push
