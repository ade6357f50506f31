"""Converters: one pass per module, applied in this order by `conversion.transform`.

 1. directives               ag.set_loop_options(...) -> loop annotations
 2. unsupported              `try` in control flow -> a check naming it in tensor blocks
 3. match_statements         match -> if/elif chain (literal, value, capture, wildcard, |, guards)
 4. break_statements         break -> flag + `continue`, loop test / extra test, `else:`
 5. continue_statements      continue -> flag, rest of the body guarded
 6. return_statements        early/nested return -> do_return / retval_, guards
 7. asserts                  assert -> ag__.assert_stmt
 8. lists                    l.append(x) / l.pop() -> ag__.list_append / ag__.list_pop
 9. call_trees               f(x) -> ag__.converted_call(f, (x,), None)
10. control_flow             if/while/for -> ag__.if_stmt / while_stmt / for_stmt
11. conditional_expressions  a if c else b -> ag__.if_exp
12. logical_expressions      and/or/not, chained comparisons -> ag__.and_/or_/not_/compare_chain
13. f_strings                f"..." -> ag__.fstring (printed with a graph's run-time values)

Converters 11-13 run as one walk of the tree (they rewrite different nodes).

Jumps are lowered before control flow so that the lowered flags become ordinary
state; calls are wrapped before control flow so that the functions the control
flow converter generates are not wrapped; expressions are converted last, inside
the tests that control flow moved into functions.
"""
