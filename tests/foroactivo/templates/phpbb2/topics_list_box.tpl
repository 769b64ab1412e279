<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/subsilver/topics_list_box.tpl (trimmed: no selection boxes, no avatars) -->
<!-- BEGIN topics_list_box --><!-- BEGIN row --><!-- BEGIN header_table -->
<table class="forumline" width="100%" border="0" cellspacing="1" cellpadding="0">
	<tr>
		<th colspan="2" align="center" nowrap="nowrap">&nbsp;Temas&nbsp;</th>
		<th align="center" nowrap="nowrap" width="80">&nbsp;Respuestas&nbsp;</th>
		<th align="center" nowrap="nowrap" width="100">&nbsp;Autor&nbsp;</th>
		<th align="center" nowrap="nowrap" width="50">&nbsp;Visitas&nbsp;</th>
		<th align="center" nowrap="nowrap" width="150">&nbsp;Último mensaje&nbsp;</th>
	</tr>
<!-- END header_table -->
<!-- BEGIN topic -->
	<tr>
		<td class="row1" align="center" valign="middle" width="20"><img title="No hay mensajes nuevos" src="https://illiweb.com/fa/subsilver/folder_big.gif" alt="No hay mensajes nuevos" /></td>
		<td class="{topics_list_box.row.ROW_CLASS}" width="100%">
			<div class="topictitle">
				<h2 class="topic-title">
					<a class="topictitle" href="{topics_list_box.row.U_VIEW_TOPIC}">{topics_list_box.row.TOPIC_TITLE}</a>
				</h2>
			</div>
			<span class="gensmall">{topics_list_box.row.GOTO_PAGE}</span>
		</td>
		<td class="row2" align="center" valign="middle"><span class="postdetails">{topics_list_box.row.REPLIES}</span></td>
		<td class="row3" align="center" valign="middle"><span class="name"><strong>{topics_list_box.row.TOPIC_AUTHOR}</strong></span></td>
		<td class="row2" align="center" valign="middle"><span class="postdetails">{topics_list_box.row.VIEWS}</span></td>
		<td class="row3Right" align="center" valign="middle" nowrap="nowrap">
			<span class="postdetails">{topics_list_box.row.LAST_POST_TIME}<br />{topics_list_box.row.LAST_POST_AUTHOR} {topics_list_box.row.LAST_POST_IMG}</span>
		</td>
	</tr>
<!-- END topic -->
<!-- BEGIN footer_table --></table><!-- END footer_table -->
<!-- END row --><!-- END topics_list_box -->
<!-- BEGIN switch_no_topics --><table class="forumline" width="100%"><tr><td class="row1" align="center"><span class="gen">No hay mensajes en este foro.</span></td></tr></table><!-- END switch_no_topics -->
