//go:build linux

package scripting

import (
	"bytes"
	"fmt"

	"github.com/procwalk/procwalk/scripting/internal/_luavm/ast"
	"github.com/procwalk/procwalk/scripting/internal/_luavm/parse"
)

// precheck.go bounds what parsing and compiling a script may cost, before
// gopher-lua's parser and compiler run, with no patch of theirs: its
// parser's stack grows with every level of nesting (a megabyte of "{" cost
// a GiB or 30 s), its compiler recurses once per level of an expression
// (chains of calls or + compiled for minutes, constant folding was
// quadratic), and a table constructor of more than maxTableItems list
// items lost the rest (SETLIST's operand overflowed).

// maxSyntaxDepth bounds the levels of a chunk: brackets and blocks nested
// in each other, runs of unary operators and chains of the
// right-associative .. and ^, each a level on the parser's stack.
const maxSyntaxDepth = 1000

// maxExprDepth bounds how deep expressions nest, chains of the
// left-associative operators, calls and indexes included (f()()(),
// t.a.b.c, 1 + 1 + 1 ...): the compiler recurses over each level.
const maxExprDepth = 1000

// maxTableItems is the most list items a table constructor may have:
// gopher-lua flushes them 50 at a time with SETLIST, whose block operand
// holds 511 (9 bits); past that the items landed at keys -49..0.
const maxTableItems = 50 * 511

// checkSyntaxDepth scans src with gopher-lua's own lexer and returns an
// error at the first token more than maxSyntaxDepth levels deep. A lexical
// error is left to the parser, which reports it. The count is an upper
// bound of the parser's stack: a level opens at ( [ { function do then
// repeat and closes at ) ] } end until elseif; a unary operator, .. or ^
// adds a level until the expression ends (a comma, an assignment, a
// keyword, a comparison, and or, or the start of the next statement).
func checkSyntaxDepth(name string, src []byte) error {
	sc := parse.NewScanner(bytes.NewReader(src), name)
	lexer := &parse.Lexer{}
	var saved []int        // the chain of each enclosing level, while it is open
	chain, pending := 0, 0 // operators waiting in this level; in all levels
	operand := false       // the last token ended an operand
	endChain := func() { pending -= chain; chain = 0 }
	for {
		tok, err := sc.Scan(lexer)
		if err != nil || tok.Type < 0 {
			return nil // the parser reports a lexical error
		}
		lexer.PrevTokenType = tok.Type
		switch t := tok.Type; t {
		case '(', '[', '{', parse.TFunction, parse.TDo, parse.TThen, parse.TRepeat:
			saved = append(saved, chain)
			chain, operand = 0, false
		case ')', ']', '}', parse.TEnd, parse.TUntil, parse.TElseIf:
			if len(saved) > 0 {
				endChain()
				chain = saved[len(saved)-1]
				saved = saved[:len(saved)-1]
			}
			operand = t == ')' || t == ']' || t == '}' || t == parse.TEnd
		case parse.T2Comma, '^', parse.TNot, '#':
			chain++
			pending++
			operand = false
		case '-':
			if !operand { // unary
				chain++
				pending++
			}
			operand = false
		case parse.TIdent, parse.TNumber, parse.TString, parse.TNil, parse.TTrue, parse.TFalse, parse.T3Comma:
			if operand { // an operand after an operand starts a statement
				endChain()
			}
			operand = true
		case '+', '*', '/', '%', '.', ':':
			operand = false
		default: // , ; = comparisons, and, or, other keywords: the expression ends
			endChain()
			operand = false
		}
		if depth := len(saved) + pending; depth > maxSyntaxDepth {
			return fmt.Errorf("%w: %s:%d: chunk has too many syntax levels (more than %d)", ErrCompile, name, tok.Pos.Line, maxSyntaxDepth)
		}
	}
}

// checkChunk walks a parsed chunk and returns an error at the first
// expression nested more than maxExprDepth deep within its function, or
// the first table constructor of more than maxTableItems list items.
func checkChunk(name string, chunk []ast.Stmt) error {
	c := &chunkChecker{name: name}
	c.stmts(chunk)
	return c.err
}

type chunkChecker struct {
	name string
	err  error // the first problem found: the walk stops
}

func (c *chunkChecker) fail(line int, format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s:%d: %s", ErrCompile, c.name, line, fmt.Sprintf(format, args...))
	}
}

// stmts walks a block: its expressions start at depth 0 (a statement's
// nesting is bounded by checkSyntaxDepth).
func (c *chunkChecker) stmts(list []ast.Stmt) {
	for _, s := range list {
		if c.err != nil {
			return
		}
		switch s := s.(type) {
		case *ast.AssignStmt:
			c.exprs(s.Lhs, 0)
			c.exprs(s.Rhs, 0)
		case *ast.LocalAssignStmt:
			c.exprs(s.Exprs, 0)
		case *ast.FuncCallStmt:
			c.expr(s.Expr, 0)
		case *ast.DoBlockStmt:
			c.stmts(s.Stmts)
		case *ast.WhileStmt:
			c.expr(s.Condition, 0)
			c.stmts(s.Stmts)
		case *ast.RepeatStmt:
			c.stmts(s.Stmts)
			c.expr(s.Condition, 0)
		case *ast.IfStmt:
			c.expr(s.Condition, 0)
			c.stmts(s.Then)
			c.stmts(s.Else)
		case *ast.NumberForStmt:
			c.exprs([]ast.Expr{s.Init, s.Limit, s.Step}, 0)
			c.stmts(s.Stmts)
		case *ast.GenericForStmt:
			c.exprs(s.Exprs, 0)
			c.stmts(s.Stmts)
		case *ast.FuncDefStmt:
			c.exprs([]ast.Expr{s.Name.Func, s.Name.Receiver}, 0)
			c.expr(s.Func, 0)
		case *ast.ReturnStmt:
			c.exprs(s.Exprs, 0)
		}
	}
}

func (c *chunkChecker) exprs(list []ast.Expr, depth int) {
	for _, e := range list {
		c.expr(e, depth)
	}
}

// expr walks e at depth, its operands one deeper.
func (c *chunkChecker) expr(e ast.Expr, depth int) {
	if e == nil || c.err != nil {
		return
	}
	if depth > maxExprDepth {
		c.fail(e.Line(), "expression too complex (more than %d levels)", maxExprDepth)
		return
	}
	d := depth + 1
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		c.expr(e.Object, d)
		c.expr(e.Key, d)
	case *ast.TableExpr:
		items := 0
		for _, f := range e.Fields {
			if f.Key == nil {
				items++
			}
			c.expr(f.Key, d)
			c.expr(f.Value, d)
		}
		if items > maxTableItems {
			c.fail(e.Line(), "a table constructor of %d list items, more than %d (Lua 5.1's limit): fill the table in a loop", items, maxTableItems)
		}
	case *ast.FuncCallExpr:
		c.expr(e.Func, d)
		c.expr(e.Receiver, d)
		c.exprs(e.Args, d)
	case *ast.LogicalOpExpr:
		c.expr(e.Lhs, d)
		c.expr(e.Rhs, d)
	case *ast.RelationalOpExpr:
		c.expr(e.Lhs, d)
		c.expr(e.Rhs, d)
	case *ast.StringConcatOpExpr:
		c.expr(e.Lhs, d)
		c.expr(e.Rhs, d)
	case *ast.ArithmeticOpExpr:
		c.expr(e.Lhs, d)
		c.expr(e.Rhs, d)
	case *ast.UnaryMinusOpExpr:
		c.expr(e.Expr, d)
	case *ast.UnaryNotOpExpr:
		c.expr(e.Expr, d)
	case *ast.UnaryLenOpExpr:
		c.expr(e.Expr, d)
	case *ast.FunctionExpr:
		c.stmts(e.Stmts) // a function of its own: its expressions start again
	}
}
