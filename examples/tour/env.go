package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/azurite"
)

// Environment variables that name the account to run on; the example
// programs read the same.
const (
	envConnectionString = "TABLEKIT_CONNECTION_STRING"
	envAccountURL       = "TABLEKIT_ACCOUNT_URL"
)

// tourEnv is the account the tour runs on.
type tourEnv struct {
	acct   *account.Account
	tables *aztables.ServiceClient
	// vars name the account to the example programs: NAME=value.
	vars []string
}

// connect returns the account getenv names — TABLEKIT_CONNECTION_STRING,
// else TABLEKIT_ACCOUNT_URL with azidentity's default credential, else a
// private Azurite started in memory on free ports — a sentence saying
// which, and a function that stops what connect started.
func connect(ctx context.Context, getenv func(string) string) (env *tourEnv, where string, stop func() error, err error) {
	nothing := func() error { return nil }
	if cs := getenv(envConnectionString); cs != "" {
		acct, err := account.NewFromConnectionString(cs, nil)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", envConnectionString, err)
		}
		env, err := newEnv(acct, envConnectionString+"="+cs)
		return env, fmt.Sprintf("Using the account in %s (tables at %s).", envConnectionString, acct.Endpoints().Table), nothing, err
	}
	if u := getenv(envAccountURL); u != "" {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", envAccountURL, err)
		}
		acct, err := account.New(u, cred, nil)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", envAccountURL, err)
		}
		env, err := newEnv(acct, envAccountURL+"="+u)
		return env, fmt.Sprintf("Using the account at %s with azidentity's default credential.", acct.Endpoints().Table), nothing, err
	}
	srv, err := azurite.Start(ctx, nil)
	if err != nil {
		return nil, "", nil, fmt.Errorf("no %s or %s set, and a private Azurite cannot start: %w", envConnectionString, envAccountURL, err)
	}
	acct, err := account.NewFromConnectionString(srv.ConnectionString, nil)
	if err == nil {
		env, err = newEnv(acct, envConnectionString+"="+srv.ConnectionString)
	}
	if err != nil {
		return nil, "", nil, errors.Join(err, srv.Close())
	}
	return env, fmt.Sprintf("Started Azurite (pid %d) in %v.", srv.PID(), srv.StartupDuration.Round(time.Millisecond)), srv.Close, nil
}

func newEnv(acct *account.Account, vars ...string) (*tourEnv, error) {
	tables, err := acct.TableService()
	if err != nil {
		return nil, err
	}
	return &tourEnv{acct: acct, tables: tables, vars: vars}, nil
}

// newTypedTable creates a table named after hint with random digits, and
// returns a typed view of it and a function that deletes it.
func newTypedTable[T any](ctx context.Context, env *tourEnv, hint string) (*entity.Table[T], func(), error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, nil, err
	}
	tbl, err := entity.NewTableFromService[T](env.tables, hint+hex.EncodeToString(rnd[:]))
	if err != nil {
		return nil, nil, err
	}
	if err := tbl.Provision(ctx); err != nil {
		return nil, nil, err
	}
	drop := func() {
		// A fresh context, so that the table goes also when ctx ended.
		_, _ = env.tables.DeleteTable(context.WithoutCancel(ctx), tbl.Name(), nil)
	}
	return tbl, drop, nil
}
