package pushtest

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/wopinterop/wopinterop/push"
)

// sameSecret reports how got differs from want without printing either.
func sameSecret(want, got push.Secret) error {
	switch {
	case got.Credentials != want.Credentials:
		return fmt.Errorf("the credentials differ (%d bytes, want %d)", len(got.Credentials), len(want.Credentials))
	case got.Token != want.Token:
		return fmt.Errorf("the token differs (%d bytes, want %d)", len(got.Token), len(want.Token))
	}
	return nil
}

// openAs opens ref through v and compares the secret with want.
func openAs(ctx context.Context, v push.Vault, ref string, want push.Secret) error {
	got, err := v.Open(ctx, ref)
	if err != nil {
		return fmt.Errorf("Open(%s): %w", ref, err)
	}
	if err := sameSecret(want, got); err != nil {
		return fmt.Errorf("Open(%s): %w", ref, err)
	}
	return nil
}

func checkVaultRoundTrip(ctx context.Context, k *kit) error {
	long := strings.Repeat("x", 4096)
	secrets := []push.Secret{
		{Credentials: unique("cred"), Token: unique("tok")},
		{Credentials: unique("cred")},
		{Token: unique("tok")},
		{},
		{Credentials: long, Token: strings.Repeat("y", 4096)},
		{Credentials: "dXNlcjpwYXNz==", Token: "ключ-🔑-é \"quoted\" \\ back"},
	}
	for i, s := range secrets {
		ref, err := k.vault[i%2].Seal(ctx, s)
		if err != nil {
			return fmt.Errorf("Seal of secret %d: %w", i, err)
		}
		for _, v := range k.vault {
			if err := openAs(ctx, v, ref, s); err != nil {
				return fmt.Errorf("secret %d: %w", i, err)
			}
		}
	}
	return nil
}

func checkVaultUnknown(ctx context.Context, k *kit) error {
	ref, err := k.vault[0].Seal(ctx, push.Secret{Token: unique("tok")})
	if err != nil {
		return fmt.Errorf("Seal: %w", err)
	}
	if err := k.vault[0].Discard(ctx, ref); err != nil {
		return fmt.Errorf("Discard: %w", err)
	}
	for _, probe := range []struct{ ref, what string }{
		{unique("never-sealed"), "a ref never sealed"},
		{"", "the empty ref"},
		{ref, "a discarded ref"},
	} {
		for _, v := range k.vault {
			if _, err := v.Open(ctx, probe.ref); !errors.Is(err, push.ErrSecretNotFound) {
				return fmt.Errorf("Open of %s = %v, want ErrSecretNotFound", probe.what, err)
			}
		}
	}
	return nil
}

func checkVaultDiscard(ctx context.Context, k *kit) error {
	keep, gone := push.Secret{Token: unique("keep")}, push.Secret{Token: unique("gone")}
	keepRef, err := k.vault[0].Seal(ctx, keep)
	if err != nil {
		return fmt.Errorf("Seal: %w", err)
	}
	goneRef, err := k.vault[0].Seal(ctx, gone)
	if err != nil {
		return fmt.Errorf("Seal: %w", err)
	}
	if err := k.vault[1].Discard(ctx, goneRef); err != nil {
		return fmt.Errorf("Discard: %w", err)
	}
	for _, v := range k.vault {
		if _, err := v.Open(ctx, goneRef); !errors.Is(err, push.ErrSecretNotFound) {
			return fmt.Errorf("Open after Discard = %v, want ErrSecretNotFound", err)
		}
		if err := openAs(ctx, v, keepRef, keep); err != nil {
			return fmt.Errorf("another secret after a Discard: %w", err)
		}
	}
	if err := k.vault[0].Discard(ctx, goneRef); err != nil {
		return fmt.Errorf("a repeated Discard: %w", err)
	}
	if err := k.vault[1].Discard(ctx, unique("never-sealed")); err != nil {
		return fmt.Errorf("Discard of a ref never sealed: %w", err)
	}
	return openAs(ctx, k.vault[1], keepRef, keep)
}

// neighbours returns refs one step away from ref: its last character one
// up and one down, and its trailing number, if any, one up and one down.
func neighbours(ref string) []string {
	var out []string
	if ref == "" {
		return out
	}
	last := ref[len(ref)-1]
	for _, c := range []byte{last + 1, last - 1} {
		if c > ' ' && c < 0x7f {
			out = append(out, ref[:len(ref)-1]+string(c))
		}
	}
	i := len(ref)
	for i > 0 && ref[i-1] >= '0' && ref[i-1] <= '9' {
		i--
	}
	if digits := ref[i:]; digits != "" && len(digits) <= 18 {
		n, _ := strconv.ParseInt(digits, 10, 64)
		for _, m := range []int64{n + 1, n - 1} {
			if m >= 0 {
				s := strconv.FormatInt(m, 10)
				if len(s) < len(digits) {
					s = strings.Repeat("0", len(digits)-len(s)) + s
				}
				out = append(out, ref[:i]+s)
			}
		}
	}
	return out
}

func checkVaultRefs(ctx context.Context, k *kit) error {
	const n = 64
	secret := push.Secret{Credentials: unique("cred"), Token: unique("tok")}
	var forms []string
	for _, s := range []string{secret.Credentials, secret.Token} {
		forms = append(forms, s, hex.EncodeToString([]byte(s)),
			base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s)))
	}
	refs := map[string]bool{}
	for i := range n {
		ref, err := k.vault[i%2].Seal(ctx, secret)
		if err != nil {
			return fmt.Errorf("Seal: %w", err)
		}
		if refs[ref] {
			return fmt.Errorf("Seal returned the ref %s twice", ref)
		}
		refs[ref] = true
		if len(ref) < 16 {
			return fmt.Errorf("the ref %q is shorter than 16 characters: too few to be unguessable", ref)
		}
		for _, f := range forms {
			if strings.Contains(ref, f) {
				return fmt.Errorf("the ref %q carries the secret", ref)
			}
		}
	}
	for ref := range refs {
		for _, nb := range neighbours(ref) {
			if _, err := k.vault[1].Open(ctx, nb); !errors.Is(err, push.ErrSecretNotFound) {
				return fmt.Errorf("the ref %q, one step from the sealed %q, opens (%v): refs are guessable", nb, ref, err)
			}
		}
	}
	return nil
}

func checkVaultConcurrent(ctx context.Context, k *kit) error {
	const workers, each = 16, 25
	type sealedRef struct {
		ref    string
		secret push.Secret
		gone   bool
	}
	results := make([][]sealedRef, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			mine, other := k.vault[w%2], k.vault[(w+1)%2]
			for i := range each {
				s := push.Secret{Credentials: unique("cred"), Token: unique("tok")}
				ref, err := mine.Seal(ctx, s)
				if err != nil {
					errs[w] = fmt.Errorf("Seal: %w", err)
					return
				}
				if err := openAs(ctx, other, ref, s); err != nil {
					errs[w] = err
					return
				}
				gone := i%3 == 0
				if gone {
					if err := other.Discard(ctx, ref); err != nil {
						errs[w] = fmt.Errorf("Discard: %w", err)
						return
					}
				}
				results[w] = append(results[w], sealedRef{ref, s, gone})
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, rs := range results {
		for _, r := range rs {
			if r.gone {
				if _, err := k.vault[0].Open(ctx, r.ref); !errors.Is(err, push.ErrSecretNotFound) {
					return fmt.Errorf("a secret discarded under concurrency opens again (%v)", err)
				}
				continue
			}
			if err := openAs(ctx, k.vault[0], r.ref, r.secret); err != nil {
				return fmt.Errorf("after concurrent use: %w", err)
			}
		}
	}
	return nil
}
