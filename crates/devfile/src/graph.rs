//! The service dependency graph: deploy order and cycle detection.

/// Orders services so that every service comes after the services it depends on; services
/// with no ordering constraint keep their devfile order. Dependencies on unknown names are
/// ignored here (the validator reports them). Returns the cycle, closed (`a -> b -> a`), if any.
pub fn deploy_order<'a, I, D>(services: I) -> Result<Vec<String>, Vec<String>>
where
    I: IntoIterator<Item = (&'a str, D)>,
    D: IntoIterator<Item = &'a str>,
{
    let nodes: Vec<(&str, Vec<&str>)> = services
        .into_iter()
        .map(|(name, deps)| (name, deps.into_iter().collect()))
        .collect();
    let index = |name: &str| nodes.iter().position(|(n, _)| *n == name);
    // 0 = unvisited, 1 = on the stack, 2 = done
    let mut state = vec![0u8; nodes.len()];
    let mut order = Vec::with_capacity(nodes.len());
    let mut stack: Vec<usize> = Vec::new();
    fn visit(
        i: usize,
        nodes: &[(&str, Vec<&str>)],
        index: &dyn Fn(&str) -> Option<usize>,
        state: &mut [u8],
        stack: &mut Vec<usize>,
        order: &mut Vec<String>,
    ) -> Result<(), Vec<String>> {
        match state[i] {
            2 => return Ok(()),
            1 => {
                let from = stack.iter().position(|&s| s == i).unwrap_or(0);
                let mut cycle: Vec<String> = stack[from..]
                    .iter()
                    .map(|&s| nodes[s].0.to_owned())
                    .collect();
                cycle.push(nodes[i].0.to_owned());
                return Err(cycle);
            }
            _ => {}
        }
        state[i] = 1;
        stack.push(i);
        for dep in &nodes[i].1 {
            if let Some(j) = index(dep)
                && j != i
            {
                visit(j, nodes, index, state, stack, order)?;
            }
        }
        stack.pop();
        state[i] = 2;
        order.push(nodes[i].0.to_owned());
        Ok(())
    }
    for i in 0..nodes.len() {
        visit(i, &nodes, &index, &mut state, &mut stack, &mut order)?;
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_come_first() {
        let order =
            deploy_order([("web", vec!["api"]), ("api", vec!["db"]), ("db", vec![])]).unwrap();
        assert_eq!(order, ["db", "api", "web"]);
    }

    #[test]
    fn independent_services_keep_order() {
        let order = deploy_order([("a", vec![]), ("b", vec![]), ("c", vec!["a"])]).unwrap();
        assert_eq!(order, ["a", "b", "c"]);
    }

    #[test]
    fn cycle_is_named() {
        let cycle =
            deploy_order([("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"])]).unwrap_err();
        assert_eq!(cycle, ["a", "b", "c", "a"]);
    }
}
