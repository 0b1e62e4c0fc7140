package dev.quell.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PolicyTableTest {
  private final List<String> made = new ArrayList<>();
  private final PolicyTable<String> table = new PolicyTable<>(name -> {
    made.add(name);
    return "entry of " + name;
  });

  @Test
  void entriesAreMadeOnceAndFoundByName() {
    String name = "inventory";
    assertThat(table.get(name)).isEqualTo("entry of inventory");
    assertThat(table.get(name)).isEqualTo("entry of inventory");
    assertThat(table.get(new String("inventory"))).isEqualTo("entry of inventory"); // an equal name, not the same
    assertThat(table.get("orders")).isEqualTo("entry of orders");
    assertThat(made).containsExactly("inventory", "orders");
    assertThat(table.size()).isEqualTo(2);
  }

  @Test
  void aRemovedNameStartsAgain() {
    String name = "users:7";
    table.get(name);
    assertThat(table.remove(name)).isEqualTo("entry of users:7");
    assertThat(table.remove(name)).isNull();
    assertThat(table.size()).isZero();
    table.get(name); // the cached last entry was dropped too
    assertThat(made).containsExactly("users:7", "users:7");
  }

  @Test
  void namesPastTheBoundShareTheOverflowEntry() {
    for (int i = 0; i < PolicyTable.MAX_NAMES; i++) {
      table.get("p" + i);
    }
    assertThat(table.get("late")).isEqualTo("entry of " + PolicyTable.OVERFLOW_NAME);
    assertThat(table.get("later")).isEqualTo("entry of " + PolicyTable.OVERFLOW_NAME);
    assertThat(table.get("p0")).isEqualTo("entry of p0"); // names that have entries keep them
    assertThat(table.size()).isEqualTo(PolicyTable.MAX_NAMES + 1);
    table.remove("p1");
    table.remove("p2");
    assertThat(table.get("late")).isEqualTo("entry of late"); // room again
  }
}
